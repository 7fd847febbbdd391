"""One row per HindsightBench reply x sketch parser version: every reply read by the versioned
parsers of ingest/stats/hb_parsers.py (sketches for arm replies; the REC estimate; LAP permissive and
strict), so the marts can show the versions side by side. Truncated replies are kept, unparsed."""
import pandas as pd

from ingest.stats.hb_parsers import PARSER_VERSIONS, parse_lap, parse_rec, parse_sketches


def model(dbt, session):
    dbt.config(materialized="table")
    replies = dbt.ref("stg_raw__hb_responses").df()
    rows = []
    for reply in replies.itertuples(index=False):
        text = reply.reply_text or ""
        base = {"model_key": reply.model_key, "source": reply.source, "kind": reply.kind, "arm": reply.arm,
                "decision_date": reply.decision_date, "replicate": reply.replicate, "sample": reply.sample,
                "request_id": reply.request_id, "is_truncated": bool(reply.is_truncated),
                "probe_set": reply.probe_set, "temperature": reply.temperature}
        rec = parse_rec(text) if reply.kind == "rec" and not reply.is_truncated else None
        lap = (parse_lap(text), parse_lap(text, "strict")) if reply.kind == "lap" and not reply.is_truncated else (None, None)
        for version in PARSER_VERSIONS:
            parsed = parse_sketches(text, version) if reply.kind == "arm" and not reply.is_truncated else None
            status = "truncated" if reply.is_truncated else (parsed.status if parsed else "ok")
            rows.append({**base, "parser_version": version, "parse_status": status,
                         "valid_count": parsed.valid_count if parsed else None,
                         "invalid_count": parsed.invalid_count if parsed else None,
                         "directions": parsed.directions if parsed else None,
                         "estimated_date": rec, "lap_answer": lap[0], "lap_answer_strict": lap[1]})
    columns = ["model_key", "source", "kind", "arm", "decision_date", "replicate", "sample", "request_id",
               "is_truncated", "probe_set", "temperature", "parser_version", "parse_status", "valid_count", "invalid_count", "directions",
               "estimated_date", "lap_answer", "lap_answer_strict"]
    # typed even when empty (a warehouse without replies), so the marts' contracts hold
    types = {"replicate": "Int32", "sample": "Int32", "temperature": "float64", "valid_count": "Int32",
             "invalid_count": "Int32", "is_truncated": "boolean"}
    return pd.DataFrame(rows, columns=columns).astype({c: types.get(c, "string") for c in columns})
