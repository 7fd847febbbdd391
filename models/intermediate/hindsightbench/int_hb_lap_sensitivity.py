"""One row per model x LAP series (temperature, samples) x theta: the effective cutoff, its
displacement against the reference cell, delta per series, and the rep jackknife of the reference
series (ingest/stats/hb_robustness.py). Incremental by model: a build computes the models whose
inputs changed."""
import pandas as pd

from ingest.stats.hb_audit import AuditParams
from ingest.stats.hb_robustness import fingerprint, lap_sensitivity, models_to_compute, per_model_fingerprints


def _protocol_temperature(dbt, profile: str) -> float:
    """The LAP probes' temperature as the protocol's sampling profile sets it (seed sampling_profiles)."""
    profiles = dbt.ref("sampling_profiles").df()
    return float(profiles.loc[profiles["profile"] == profile, "temperature"].iloc[0])


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
    options = {
        "thetas": [float(t) for t in str(dbt.config.get("hb_lap_thetas")).split()],
        "reference_theta": float(dbt.config.get("hb_lap_threshold")),
        "protocol_temperature": _protocol_temperature(dbt, dbt.config.get("hb_lap_profile")),
        "subsets": int(dbt.config.get("hb_lap_jackknife_subsets")),
        "significance_t": float(dbt.config.get("hb_delta_significance_t")),
    }
    rep_counts = dbt.ref("int_hb_lap_rep_counts").df()
    counts = dbt.ref("int_hb_sketch_counts").df()
    dates = dbt.ref("int_hb_dates").df()
    keys = sorted(rep_counts["model_key"].unique())
    r_counts = counts[counts["arm"] == "R"]
    per_model = dict(tuple(rep_counts.groupby("model_key", sort=False)))      # one pass, not a filter per model
    fingerprints = {key: fingerprint(per_model[key], value)
                    for key, value in per_model_fingerprints(r_counts, keys, fingerprint(dates), params,
                                                             sorted(options.items())).items()}
    todo = models_to_compute(dbt, session, fingerprints)
    out = lap_sensitivity(rep_counts[rep_counts["model_key"].isin(todo)], r_counts, dates, params, **options)
    out["input_fingerprint"] = out["model_key"].map(fingerprints).astype("string")
    out["computed_at"] = pd.Timestamp.now(tz="UTC").tz_localize(None)   # when: an append leaves the others' as they were
    return out
