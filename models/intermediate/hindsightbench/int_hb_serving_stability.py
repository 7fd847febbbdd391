"""One row per declared serving pair (a registry row's serving_variant_of) x endpoint (E2, E3): both
configurations' estimates and CIs as their rows have them (int_hb_window_perturbation, perturbation
none) and the BM-2a verdict of ingest/stats/hb_robustness.serving_verdict, the rule `hindsight audit
compare` prints (through ingest/stats/hb_steps.py)."""
from ingest.stats.hb_steps import hb_serving_stability


def model(dbt, session):
    dbt.config(materialized="table")
    frames = {"registry": dbt.ref("stg_raw__hb_registry").df(), "rows": dbt.ref("int_hb_window_perturbation").df()}
    return hb_serving_stability(frames, {"hb_serving_underpowered_width": dbt.config.get("hb_serving_underpowered_width")})
