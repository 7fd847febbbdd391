"""One row per model x arm (W, M): how many replies mention a year, an event of either lexicon, a
"Month YYYY", and in W the asserted fake year, the true year and an anachronism (patterns: seed
hb_transcript_patterns; ingest/stats/hb_robustness.py). Incremental by model."""
import pandas as pd

from ingest.stats.hb_robustness import Lexicon, fingerprint, models_to_compute, per_model_fingerprints, transcript_audit


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="delete+insert", unique_key="model_key")
    replies = dbt.ref("int_hb_arm_replies").df()
    nodes = dbt.ref("int_hb_nodes").df()[["decision_date", "fake_date"]]
    patterns = dbt.ref("hb_transcript_patterns").df()
    keys = sorted(replies["model_key"].unique())
    fingerprints = per_model_fingerprints(replies, keys, fingerprint(nodes), fingerprint(patterns))
    todo = models_to_compute(dbt, session, fingerprints)
    out = transcript_audit(replies[replies["model_key"].isin(todo)], nodes, Lexicon(patterns))
    out["input_fingerprint"] = out["model_key"].map(fingerprints).astype("string")
    out["computed_at"] = pd.Timestamp.now(tz="UTC").tz_localize(None)   # when: an append leaves the others' as they were
    return out
