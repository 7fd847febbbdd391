"""One row per declared serving pair (a registry row's serving_variant_of) x endpoint (E2, E3): both
configurations' estimates and CIs as their rows have them (int_hb_window_perturbation, perturbation
none) and the BM-2a verdict of ingest/stats/hb_robustness.serving_verdict, the rule `hindsight audit
compare` prints."""
import pandas as pd

from ingest.stats.hb_robustness import serving_verdict


def model(dbt, session):
    dbt.config(materialized="table")
    width = float(dbt.config.get("hb_serving_underpowered_width"))
    registry = dbt.ref("stg_raw__hb_registry").df()
    rows = dbt.ref("int_hb_window_perturbation").df()
    rows = rows[rows["perturbation"] == "none"].set_index(["model_key", "endpoint"])
    out = []
    for variant in registry[registry["serving_variant_of"].notna()].itertuples(index=False):
        for endpoint in ("E2", "E3"):
            cells = {}
            for role, key in (("reference", variant.serving_variant_of), ("variant", variant.model_key)):
                found = rows.loc[(key, endpoint)] if (key, endpoint) in rows.index else None
                cells[role] = tuple(None if found is None or pd.isna(found[c]) else float(found[c])
                                    for c in ("estimate", "ci_low", "ci_high"))
            verdict, reason = serving_verdict(cells["reference"], cells["variant"], width)
            out.append({"reference_key": variant.serving_variant_of, "variant_key": variant.model_key, "endpoint": endpoint,
                        "reference_estimate": cells["reference"][0], "reference_ci_low": cells["reference"][1],
                        "reference_ci_high": cells["reference"][2], "variant_estimate": cells["variant"][0],
                        "variant_ci_low": cells["variant"][1], "variant_ci_high": cells["variant"][2],
                        "verdict": verdict, "reason": reason})
    columns = {"reference_key": "string", "variant_key": "string", "endpoint": "string", "reference_estimate": "float64",
               "reference_ci_low": "float64", "reference_ci_high": "float64", "variant_estimate": "float64",
               "variant_ci_low": "float64", "variant_ci_high": "float64", "verdict": "string", "reason": "string"}
    return pd.DataFrame(out, columns=list(columns)).astype(columns)
