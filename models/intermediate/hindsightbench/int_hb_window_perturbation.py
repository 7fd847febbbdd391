"""One row per model x window perturbation x endpoint (E2, E3): the row's gap and bootstrap
(ingest/stats/hb_robustness.py over ingest/stats/hb_audit.py, through ingest/stats/hb_steps.py) on
other crisis and calm windows. Incremental by model: a build computes the models whose inputs changed.
The incremental pattern: docs/architecture.md#the-incremental-pattern.
"""
from ingest.stats.hb_robustness import models_to_compute
from ingest.stats.hb_steps import hb_window_perturbation


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
    frames = {"counts": dbt.ref("int_hb_sketch_counts").df(), "dates": dbt.ref("int_hb_dates").df(),
              "specs": dbt.ref("hb_window_perturbations").df(), "events": dbt.ref("hb_crisis_events").df()}
    return hb_window_perturbation(frames, protocol, lambda fingerprints: models_to_compute(dbt, session, fingerprints))
