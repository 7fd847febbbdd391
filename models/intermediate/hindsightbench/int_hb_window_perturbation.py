"""One row per model x window perturbation x endpoint (E2, E3): the row's gap and bootstrap
(ingest/stats/hb_robustness.py over ingest/stats/hb_audit.py) on other crisis and calm windows.
Incremental by model: a build computes the models whose inputs changed."""
import pandas as pd

from ingest.stats.hb_audit import AuditParams
from ingest.stats.hb_robustness import fingerprint, models_to_compute, per_model_fingerprints, window_perturbation


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="delete+insert", unique_key="model_key")
    # dbt hands a Python model only the config keys its code names literally
    protocol = {
        "hb_bootstrap_replicates": dbt.config.get("hb_bootstrap_replicates"),
        "hb_bootstrap_seed": dbt.config.get("hb_bootstrap_seed"),
        "hb_min_finite_replicates": dbt.config.get("hb_min_finite_replicates"),
        "hb_hac_lags": dbt.config.get("hb_hac_lags"),
        "hb_delta_min_n": dbt.config.get("hb_delta_min_n"),
        "hb_delta_min_lap_variance": dbt.config.get("hb_delta_min_lap_variance"),
        "hb_chance_alpha": dbt.config.get("hb_chance_alpha"),
        "hb_bootstrap_draws": dbt.config.get("hb_bootstrap_draws"),
        "bootstrap_seed": dbt.config.get("bootstrap_seed"),
    }
    params = AuditParams.from_vars(protocol.get)
    counts = dbt.ref("int_hb_sketch_counts").df()
    dates = dbt.ref("int_hb_dates").df()
    specs, events = dbt.ref("hb_window_perturbations").df(), dbt.ref("hb_crisis_events").df()
    keys = sorted(counts["model_key"].unique())
    shared = (fingerprint(dates), fingerprint(specs), fingerprint(events), params)
    fingerprints = per_model_fingerprints(counts, keys, *shared)
    todo = models_to_compute(dbt, session, fingerprints)
    out = window_perturbation(counts[counts["model_key"].isin(todo)], dates, specs, events, params)
    out["input_fingerprint"] = out["model_key"].map(fingerprints).astype("string")
    out["computed_at"] = pd.Timestamp.now(tz="UTC").tz_localize(None)   # when: an append leaves the others' as they were
    return out
