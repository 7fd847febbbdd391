"""One row per HindsightBench reply x sketch parser version: every reply read by the versioned
parsers of ingest/stats/hb_parsers.py (sketches for arm replies; the REC estimate; LAP permissive and
strict), so the marts can show the versions side by side. Truncated replies are kept, unparsed
(ingest/stats/hb_steps.py, which Spark runs too). Incremental by model: a build reads and parses the
replies of the models whose replies (or the parser versions) changed.
The incremental pattern: docs/architecture.md#the-incremental-pattern.
"""
from ingest.stats.hb_parsers import PARSER_VERSIONS
from ingest.stats.hb_robustness import changed_models_rows
from ingest.stats.hb_steps import REPLY_KEYS, hb_reply_parses


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="delete+insert", unique_key="model_key")
    replies, fingerprints = changed_models_rows(dbt, session, dbt.ref("stg_raw__hb_responses"), PARSER_VERSIONS,
                                                columns=[*REPLY_KEYS, "reply_text"])
    return hb_reply_parses({"replies": replies}, {}, fingerprints=fingerprints)
