"""The HindsightBench audit rows with their robustness verdicts, and one row's evidence: its numbers,
the checks it failed, its cells by decision date (what the trigger (E1-E3 arms) and recall probes gave
on each date), the transcript audit per arm, the REC probes by period and the LAP series."""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ingest.config import PROJECT_DIR
from ingest.explore.snapshot import has_mart
from ingest.explore.snapshot import records as _rows
from ingest.stats.hb_robustness import Lexicon, reply_flags

PATTERNS = PROJECT_DIR / "seeds" / "hb_transcript_patterns.csv"


def audit_rows(cur) -> list[dict]:
    return _rows(cur, """
        select r.model_key, r.row_version, r.display, r.tier, r.e1_est, r.e1_lo, r.e1_hi, r.e2_est, r.e2_lo, r.e2_hi,
            r.e3_est, r.e3_lo, r.e3_hi, r.empirical_cutoff, r.delta, r.delta_gate, r.cells, r.lap_at_chance, r.parser_version,
            b.failed_checks, b.serving_verdict, b.window_fails, b.cutoff_fails, b.transcript_fails, b.serving_fails
        from agg_hb_audit_rows as r
        left join agg_hb_robustness as b using (model_key, row_version)
        order by r.model_key, r.row_version""")


def row_head(cur, model_key: str, row_version: int) -> dict | None:
    """An audit row with its robustness verdict, or None."""
    found = _rows(cur, """
        select * from agg_hb_audit_rows as r left join agg_hb_robustness as b using (model_key, row_version)
        where model_key = ? and row_version = ?""", [model_key, row_version])
    return found[0] if found else None


def audit_row(cur, model_key: str, row_version: int) -> dict | None:
    head = row_head(cur, model_key, row_version)
    if head is None:
        return None
    keys = [model_key, row_version]
    params, dates = keys, """select * exclude (model_key, row_version) from agg_hb_perdate_crosstab
               where model_key = ? and row_version = ?"""
    if has_mart(cur, "fct_hb_replies"):      # (a snapshot from before the replies' mart: the cross-tab's alone)
        # the cross-tab's dates (the panel's, before its cutoff) and every other date the model has replies on
        dates = f"""with crosstab as ({dates})
                    select * from crosstab
                    union all by name
                    select distinct decision_date from fct_hb_replies
                    where model_key = ? and decision_date not in (select decision_date from crosstab)"""
        params = [*keys, model_key]
    return {"row": head,
            "dates": _rows(cur, f"select * from ({dates}) order by decision_date", params),
            "transcripts": _rows(cur, """select * exclude (model_key, row_version) from agg_hb_transcript_audit
                                         where model_key = ? and row_version = ? order by arm""", keys),
            "rec": _rows(cur, "select * exclude (model_key) from agg_hb_rec where model_key = ? order by period", [model_key]),
            "lap": _rows(cur, """select decision_month, period, n_lines, lap, is_above_threshold from agg_hb_lap_series
                                 where model_key = ? order by decision_date""", [model_key])}



REPLY_KEYS = ["model_key", "kind", "arm", "decision_date", "replicate", "sample", "probe_set", "temperature"]
KINDS = ("arm", "rec", "lap")
ARMS = ("R", "D", "M", "W", "W72")
PROBE_SETS = ("protocol", "lap_sensitivity")
_ORDER = ("case r.kind when 'arm' then 0 when 'rec' then 1 else 2 end, "
          "case r.arm " + " ".join(f"when '{a}' then {i}" for i, a in enumerate(ARMS)) + " end")


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The transcript audit's patterns: the project's seed, as the build that made the audit rows read it."""
    return Lexicon(pd.read_csv(PATTERNS, dtype={"pattern_set": str, "pattern": str}, keep_default_na=False)
                   .assign(ignore_case=lambda f: f["ignore_case"].astype(str).str.lower() == "true"))


def date_cell(cur, model_key: str, row_version: int, date: str) -> dict | None:
    """What a row's date gave (its agg_hb_perdate_crosstab line; only the date for one after the panel's
    cutoff, which the cross-tab leaves out), or None for a date the model has no reply on."""
    found = _rows(cur, """
        select coalesce(c.decision_date, r.decision_date) as decision_date, c.* exclude (decision_date)
        from (select distinct decision_date from fct_hb_replies where model_key = ? and decision_date = ?) as r
        full join (select * from agg_hb_perdate_crosstab where model_key = ? and row_version = ? and decision_date = ?) as c
          using (decision_date)""", [model_key, date, model_key, row_version, date])
    return found[0] if found else None


def cell_replies(cur, model_key: str, date: str, kind: str | None = None, arm: str | None = None) -> list[dict]:
    """The replies behind one decision date of a model (of one kind or arm, when named): each with what
    every parser version read from it and, for a whole W or M arm reply, the transcript audit's flags
    (reply_flags of ingest/stats/hb_robustness.py, the function whose sums are the audit's counts)."""
    keys = " and ".join(f"p.{k} is not distinct from r.{k}" for k in REPLY_KEYS)
    where, params = ["r.model_key = ?", "r.decision_date = ?"], [model_key, date]
    for column, value in (("kind", kind), ("arm", arm)):
        if value:
            where.append(f"r.{column} = ?")
            params.append(value)
    replies = _rows(cur, f"""
        with read as (
            select r.kind, r.arm, r.decision_date, r.replicate, r.sample, r.probe_set, r.temperature, r.request_id,
                   r.call_id, r.source, r.reply_text, r.finish_reason, r.is_truncated, r.fake_date,
                   list(struct_pack(version := p.parser_version, status := p.parse_status, valid := p.valid_count,
                                    invalid := p.invalid_count, directions := p.directions,
                                    estimated_date := p.estimated_date, lap_answer := p.lap_answer,
                                    lap_answer_strict := p.lap_answer_strict)
                        order by p.parser_version) filter (where p.parser_version is not null) as parses
            from fct_hb_replies as r
            left join fct_hb_reply_parses as p on p.model_key = ? and {keys}
            where {' and '.join(where)}
            group by all
        )
        select * from read as r
        order by {_ORDER}, r.probe_set desc, r.temperature nulls first, r.replicate, r.sample""", [model_key, *params])
    audited = [r for r in replies if r["kind"] == "arm" and r["arm"] in ("W", "M") and not r["is_truncated"]]
    if audited:
        nodes = pd.DataFrame({"decision_date": [date], "fake_date": [audited[0]["fake_date"]]})
        flags = reply_flags(pd.DataFrame(audited), nodes, lexicon())
        for reply, row in zip(audited, flags.to_dict(orient="records")):
            reply["flags"] = {name: None if pd.isna(value) else bool(value) for name, value in row.items()}
    return replies


def reply_position(reply: dict) -> dict:
    """What names a reply in a link: its call position (a release's replies have no request id)."""
    return {"date": reply["decision_date"], "kind": reply["kind"], "arm": reply["arm"], "replicate": reply["replicate"],
            "sample": reply["sample"], "probe_set": reply["probe_set"], "temperature": reply["temperature"]}


def reply(cur, model_key: str, position: dict) -> dict | None:
    """One reply whole, by its call position: its text, the request as sent (the fct_hb_requests row of
    the same position: a release's replies answered the same requests) and its ledger entry
    (fct_llm_calls, for a runner's reply)."""
    same = " and ".join(f"{{side}}.{k} is not distinct from ?" for k in ("arm", "replicate", "sample", "temperature"))
    values = [position[k] for k in ("arm", "replicate", "sample", "temperature")]
    found = _rows(cur, f"""
        with one as (
            select * from fct_hb_replies as r
            where r.model_key = ? and r.decision_date = ? and r.kind = ? and r.probe_set = ? and {same.format(side='r')}
        )
        select one.*, q.request_id as sent_request_id, q.system_text, q.user_text, q.asserted_date, q.sampling_profile,
               q.max_output_tokens, q.template_version, c.input_tokens, c.output_tokens, c.latency_ms, c.call_status,
               c.settings_sent, c.reported_model
        from one
        left join fct_hb_requests as q
          on q.decision_date = one.decision_date and q.kind = one.kind and q.probe_set = one.probe_set
         and q.arm is not distinct from one.arm and q.replicate is not distinct from one.replicate
         and q.sample = one.sample and (one.temperature is null or q.temperature = one.temperature)
        left join fct_llm_calls as c on c.call_id = one.call_id and c.call_status = 'ok'""",
                  [model_key, position["date"], position["kind"], position["probe_set"], *values])
    return found[0] if found else None


def flat_replies(replies: list[dict]) -> list[dict]:
    """REPLIES as a download's rows: each parser version's reading and each flag a column of its own
    (v2_parse_status, ..., flag_year, ...)."""
    rows = []
    for one in replies:
        row = {k: v for k, v in one.items() if k not in ("parses", "flags")}
        for parse in one.get("parses") or []:
            row.update({f"{parse['version']}_{k}": v for k, v in parse.items() if k != "version"})
        row.update({f"flag_{k}": v for k, v in (one.get("flags") or {}).items()})
        rows.append(row)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    return [{k: row.get(k) for k in columns} for row in rows]
