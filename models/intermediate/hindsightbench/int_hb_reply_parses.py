"""One row per HindsightBench reply x sketch parser version: every reply read by the versioned
parsers of ingest/stats/hb_parsers.py (sketches for arm replies; the REC estimate; LAP permissive and
strict), so the marts can show the versions side by side. Truncated replies are kept, unparsed
(ingest/stats/hb_steps.py, which Spark runs too)."""
from ingest.stats.hb_steps import hb_reply_parses


def model(dbt, session):
    dbt.config(materialized="table")
    return hb_reply_parses({"replies": dbt.ref("stg_raw__hb_responses").df()}, {})
