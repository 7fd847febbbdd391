"""One row per model x arm (W, M): how many replies mention a year, an event of either lexicon, a
"Month YYYY", and in W the asserted fake year, the true year and an anachronism (patterns: seed
hb_transcript_patterns; ingest/stats/hb_robustness.py through ingest/stats/hb_steps.py).
Incremental by model."""
from ingest.stats.hb_robustness import models_to_compute
from ingest.stats.hb_steps import hb_transcript_audit


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="delete+insert", unique_key="model_key")
    frames = {"replies": dbt.ref("int_hb_arm_replies").df(), "nodes": dbt.ref("int_hb_nodes").df(),
              "patterns": dbt.ref("hb_transcript_patterns").df()}
    return hb_transcript_audit(frames, {}, lambda fingerprints: models_to_compute(dbt, session, fingerprints))
