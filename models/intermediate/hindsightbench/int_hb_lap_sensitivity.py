"""One row per model x LAP series (temperature, samples) x theta: the effective cutoff, its
displacement against the reference cell, delta per series, and the rep jackknife of the reference
series (ingest/stats/hb_robustness.py, through ingest/stats/hb_steps.py). Incremental by model: a
build computes the models whose inputs changed.
The incremental pattern: docs/architecture.md#the-incremental-pattern.
"""
from ingest.stats.hb_robustness import models_to_compute
from ingest.stats.hb_steps import hb_lap_sensitivity


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="delete+insert", unique_key="model_key")
    # dbt hands a Python model only the config keys its code names literally
    parameters = {
        "hb_bootstrap_replicates": dbt.config.get("hb_bootstrap_replicates"),
        "hb_bootstrap_seed": dbt.config.get("hb_bootstrap_seed"),
        "hb_min_finite_replicates": dbt.config.get("hb_min_finite_replicates"),
        "hb_hac_lags": dbt.config.get("hb_hac_lags"),
        "hb_delta_min_n": dbt.config.get("hb_delta_min_n"),
        "hb_delta_min_lap_variance": dbt.config.get("hb_delta_min_lap_variance"),
        "hb_chance_alpha": dbt.config.get("hb_chance_alpha"),
        "hb_bootstrap_draws": dbt.config.get("hb_bootstrap_draws"),
        "bootstrap_seed": dbt.config.get("bootstrap_seed"),
        "hb_lap_thetas": dbt.config.get("hb_lap_thetas"),
        "hb_lap_threshold": dbt.config.get("hb_lap_threshold"),
        "hb_lap_profile": dbt.config.get("hb_lap_profile"),
        "hb_lap_jackknife_subsets": dbt.config.get("hb_lap_jackknife_subsets"),
        "hb_delta_significance_t": dbt.config.get("hb_delta_significance_t"),
    }
    frames = {"rep_counts": dbt.ref("int_hb_lap_rep_counts").df(), "counts": dbt.ref("int_hb_sketch_counts").df(),
              "dates": dbt.ref("int_hb_dates").df(), "profiles": dbt.ref("sampling_profiles").df()}
    return hb_lap_sensitivity(frames, parameters, lambda fingerprints: models_to_compute(dbt, session, fingerprints))
