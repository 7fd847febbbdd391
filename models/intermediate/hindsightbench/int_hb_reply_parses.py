"""One row per HindsightBench reply x sketch parser version: every reply read by the versioned
parsers of ingest/stats/hb_parsers.py (sketches for arm replies; the REC estimate; LAP permissive and
strict), so the marts can show the versions side by side. Truncated replies are kept, unparsed
(ingest/stats/hb_steps.py, which Spark runs too). Incremental by model: a build parses the models
whose replies (or the parser versions) changed."""
from ingest.stats.hb_robustness import models_to_compute
from ingest.stats.hb_steps import hb_reply_parses


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="delete+insert", unique_key="model_key")
    return hb_reply_parses({"replies": dbt.ref("stg_raw__hb_responses").df()}, {},
                           lambda fingerprints: models_to_compute(dbt, session, fingerprints))
