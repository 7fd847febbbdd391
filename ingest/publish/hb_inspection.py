"""`hindsight audit inspect`: the smoke tier's replies and how the registry's
parser reads them, and the recorded inspection that lets larger tiers run.

The release's preregistration runs 2 dates x 4 arms first and has a person look
at the replies and their parses before the full protocol is spent; `--accept`
records that look (raw.hb_inspections) and refuses while a smoke cell is
missing or cut off.
"""
from __future__ import annotations

from datetime import datetime, timezone

from ingest.config import protocol_var
from ingest.db import fetch_dicts
from ingest.errors import InputError
from ingest.stats.hb_parsers import NEWEST_PARSER, parse_sketches

# the finish reasons that mean a reply was cut off: one home, the dbt var the staging model reads
TRUNCATED = tuple(protocol_var("hb_truncated_finish_reasons"))


def parser_version(con, key: str) -> str:
    row = con.execute("select parser_version from raw.hb_registry where model_key = ? order by row_version desc limit 1",
                      [key]).fetchone()
    return (row[0] if row else None) or NEWEST_PARSER


def smoke_cells(con, key: str) -> list[dict]:
    """Each smoke request with the model's latest reply to it (NULL when not asked yet). The requests
    are the marts', the replies the runs' (a run's store, or the warehouse): two reads, joined here."""
    latest: dict[str, tuple] = {}
    for request_id, text, finish, received in con.execute(
            "select request_id, reply_text, finish_reason, received_at from raw.hb_responses "
            "where model_key = ? and source = 'runner'", [key]).fetchall():
        if request_id not in latest or received > latest[request_id][2]:
            latest[request_id] = (text, finish, received)
    cells = fetch_dicts(con, """
        select request_id, arm, decision_date, replicate from fct_hb_requests
        where in_smoke order by decision_date, arm""")
    return [{**cell, "reply_text": latest.get(cell["request_id"], (None,))[0],
             "finish_reason": latest.get(cell["request_id"], (None, None))[1]} for cell in cells]


def inspection(con, key: str) -> tuple[list[str], int, int]:
    """(lines to show, smoke cells, cells with a parsed complete reply)."""
    version = parser_version(con, key)
    cells = smoke_cells(con, key)
    lines = [f"smoke tier of {key!r}, read with sketch parser {version}:",
             f"  {'arm':3} {'date':10} {'finish':8} {'parse':11} {'valid':>5} {'invalid':>7}  directions  reply (start)"]
    parsed = 0
    for cell in cells:
        text = cell["reply_text"]
        if text is None:
            status, valid, invalid, directions = "not asked", "", "", ""
        elif cell["finish_reason"] in TRUNCATED or not text.strip():
            status, valid, invalid, directions = "truncated", "", "", ""
        else:
            result = parse_sketches(text, version)
            status, valid, invalid, directions = result.status, result.valid_count, result.invalid_count, result.directions
            parsed += result.status == "ok"
        head = " ".join((text or "").split())[:60]
        lines.append(f"  {cell['arm']:3} {cell['decision_date']:10} {cell['finish_reason'] or '':8} {status:11} "
                     f"{valid!s:>5} {invalid!s:>7}  {directions:10}  {head}")
    recorded = con.execute("select inspected_at, parsed_cells, smoke_cells from raw.hb_inspections where model_key = ? "
                           "order by inspected_at desc limit 1", [key]).fetchone()
    lines.append(f"  inspection recorded {recorded[0]:%Y-%m-%d %H:%M} UTC ({recorded[1]} of {recorded[2]} cells parsed)"
                 if recorded else "  not inspected yet: `--accept` records the inspection the larger tiers wait for")
    return lines, len(cells), parsed


def accept(con, key: str, note: str | None = None) -> str:
    """Record the inspection; refused while a smoke cell has no complete reply."""
    _, cells, parsed = inspection(con, key)
    missing = [c["request_id"] for c in smoke_cells(con, key)
               if c["reply_text"] is None or c["finish_reason"] in TRUNCATED or not c["reply_text"].strip()]
    if not cells or missing:
        raise InputError("--accept", f"{len(missing) if cells else 'all'} smoke cells of {key!r} have no complete reply "
                         f"({', '.join(missing[:4])})", f"run `hindsight audit run --tier smoke` for {key!r} first")
    con.execute("insert into raw.hb_inspections values (?, ?, ?, ?, ?)",
                [key, datetime.now(timezone.utc).replace(tzinfo=None), cells, parsed, note])
    return f"inspection of {key!r} recorded: {parsed} of {cells} smoke cells parsed; larger tiers may run"
