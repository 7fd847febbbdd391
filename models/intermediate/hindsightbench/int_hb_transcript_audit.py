"""One row per model x arm (W, M): how many replies mention a year, an event of either lexicon, a
"Month YYYY", and in W the asserted fake year, the true year and an anachronism (patterns: seed
hb_transcript_patterns; ingest/stats/hb_robustness.py through ingest/stats/hb_steps.py).
Incremental by model: a build reads the replies of the models it computes.
The incremental pattern: docs/architecture.md#the-incremental-pattern.
"""
from ingest.stats.hb_robustness import changed_models_rows
from ingest.stats.hb_steps import hb_transcript_audit, transcript_audit_inputs


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="delete+insert", unique_key="model_key")
    frames = {"nodes": dbt.ref("int_hb_nodes").df(), "patterns": dbt.ref("hb_transcript_patterns").df()}
    frames["replies"], fingerprints = changed_models_rows(dbt, session, dbt.ref("int_hb_arm_replies"),
                                                          *transcript_audit_inputs(frames))
    return hb_transcript_audit(frames, {}, fingerprints=fingerprints)
