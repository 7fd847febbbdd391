"""The HindsightBench audit rows with their robustness verdicts, and one row's evidence: its numbers,
the checks it failed, its cells by decision date (what the trigger (E1-E3 arms) and recall probes gave
on each date), the transcript audit per arm, the REC probes by period and the LAP series."""
from __future__ import annotations

from ingest.explore.snapshot import records as _rows


def audit_rows(cur) -> list[dict]:
    return _rows(cur, """
        select r.model_key, r.row_version, r.display, r.tier, r.e1_est, r.e1_lo, r.e1_hi, r.e2_est, r.e2_lo, r.e2_hi,
            r.e3_est, r.e3_lo, r.e3_hi, r.empirical_cutoff, r.delta, r.cells, r.lap_at_chance, r.parser_version,
            b.failed_checks, b.serving_verdict, b.window_fails, b.cutoff_fails, b.transcript_fails, b.serving_fails
        from agg_hb_audit_rows as r
        left join agg_hb_robustness as b using (model_key, row_version)
        order by r.model_key, r.row_version""")


def audit_row(cur, model_key: str, row_version: int) -> dict | None:
    found = _rows(cur, """
        select * from agg_hb_audit_rows as r left join agg_hb_robustness as b using (model_key, row_version)
        where model_key = ? and row_version = ?""", [model_key, row_version])
    if not found:
        return None
    keys = [model_key, row_version]
    return {"row": found[0],
            "dates": _rows(cur, """select * exclude (model_key, row_version) from agg_hb_perdate_crosstab
                                   where model_key = ? and row_version = ? order by decision_date""", keys),
            "transcripts": _rows(cur, """select * exclude (model_key, row_version) from agg_hb_transcript_audit
                                         where model_key = ? and row_version = ? order by arm""", keys),
            "rec": _rows(cur, "select * exclude (model_key) from agg_hb_rec where model_key = ? order by period", [model_key]),
            "lap": _rows(cur, """select decision_month, period, n_lines, lap, is_above_threshold from agg_hb_lap_series
                                 where model_key = ? order by decision_date""", [model_key])}
