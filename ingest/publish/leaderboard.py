"""`hindsight leaderboard`: the HindsightBench leaderboard from agg_hb_audit_rows,
as CSV (every published column, ungated) and Markdown (gated cells hidden, with
the gate named), each row with its robustness checks (agg_hb_robustness: a row
that fails one is marked, never hidden), and a drift check against a frozen
bench_rows.csv."""
from __future__ import annotations

import csv
import math
from pathlib import Path

from ingest.config import protocol_var
from ingest.errors import InputError

PUBLISHED = ["e2_est", "e2_lo", "e2_hi", "e3_est", "e3_lo", "e3_hi", "p1_calendar", "p1_model_relative",
             "rec_pre_year", "rec_pre_n", "rec_post_year", "rec_post_n", "lap_pre", "lap_post", "empirical_cutoff",
             "recall_hit_rate", "recall_n", "delta", "delta_t", "delta_n", "valid_sketch_rate", "cells"]
TOLERANCE = 1e-9


# the robustness summary each row carries into the CSV (agg_hb_robustness)
ROBUSTNESS = ["failed_checks", "e2_min", "e2_max", "e3_min", "e3_max", "e2_sign_flips", "e3_sign_flips",
              "e2_significance_lost", "e3_significance_lost",
              "cutoff_theta_displacement_max", "cutoff_reprobe_displacement_max", "jk_cutoff_span_months",
              "jk_agree_pct", "w_fake_year_rate", "w_true_year_rate", "w_anachronism_rate", "m_monthyear_rate",
              "serving_verdict"]


def rows(con) -> list[dict]:
    cursor = con.execute(f"""select audit_rows.*, robustness.model_key is not null as robustness_checked,
                                    {', '.join('robustness.' + c for c in ROBUSTNESS)}
                             from agg_hb_audit_rows as audit_rows
                             left join agg_hb_robustness as robustness on robustness.model_key = audit_rows.model_key
                             order by audit_rows.e2_est desc nulls last, audit_rows.model_key""")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _text(value) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)


def write_csv(rows_: list[dict], path: Path) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        columns = ["model_key", "display", "generation", *PUBLISHED, "e1_est", "e1_lo", "e1_hi", "lap_at_chance",
                   "delta_gate", "delta_rank_deficient", *ROBUSTNESS]
        writer.writerow(columns)
        for row in rows_:
            writer.writerow([_text(row.get(c)) for c in columns])


def _number(value, digits=3) -> str:
    return "—" if value is None else f"{value:+.{digits}f}" if isinstance(value, float) else str(value)


def _share(value, form=".2f") -> str:
    return "—" if value is None else f"{value:{form}}"


def cells(row: dict) -> dict[str, str]:
    """One audit row as the leaderboard prints it: gated cells hidden, the gate named."""
    def interval(key):
        if not row[f"{key}_parity"]:
            return "—ᵏ (sample parity)"
        return f"{_number(row[f'{key}_est'])} [{_number(row[f'{key}_lo'])}, {_number(row[f'{key}_hi'])}]"

    p1 = row["p1_model_relative"] if row["p1_mode"] == "model_relative" else row["p1_calendar"]
    p1_cell = "—ᵏ (sample parity)" if not row["p1_parity"] else f"{_number(p1)} ({row['p1_mode']})"
    # delta needs a LAP signal: a model whose LAP recall is at chance has none (the release marks it
    # invalid); where delta's own rules fail it is NULL and the failed rule is named
    if row["lap_at_chance"]:
        delta, delta_t = "—ᵍ (LAP at chance)", "—"
    elif row["delta"] is None:
        delta, delta_t = "—ᵍ (" + (row["delta_gate"] or "undefined") + ")", "—"
    else:
        delta = _number(row["delta"]) + ("ʳ" if row["delta_rank_deficient"] else "")
        delta_t = _share(row["delta_t"])
    return {
        "model": row["display"] or row["model_key"],
        "gen": "—" if row["generation"] is None else str(int(row["generation"])),
        "E1 [95% CI]": interval("e1"), "E2 [95% CI]": interval("e2"), "E3 [95% CI]": interval("e3"),
        "P1": p1_cell,
        "LAP pre / post": f"{_share(row['lap_pre'])} / {_share(row['lap_post'])}",
        "recall hit": _share(row["recall_hit_rate"]),
        "cutoff": "—ᵍ (LAP at chance)" if bool(row["lap_at_chance"]) else (row["empirical_cutoff"] or "—"),
        "REC pre": "—ⁿ" if row["rec_pre_year"] is None else f"{row['rec_pre_year']:.2f}",
        "REC post": "—ⁿ" if row["rec_post_year"] is None else f"{row['rec_post_year']:.2f}",
        "δ": delta, "δ t": delta_t, "VALID": _share(row["valid_sketch_rate"], ".1%"),
        "robustness": robustness(row),
    }


def robustness(row: dict) -> str:
    """The row's robustness mark: the checks it fails (window, cutoff, transcript, serving) or that it passes."""
    if not row.get("robustness_checked"):
        return "— (not checked: `hindsight build`)"
    return f"⚠ fails: {row['failed_checks']}" if row.get("failed_checks") else "passes"


MARKDOWN_COLUMNS = ["model", "E2 [95% CI]", "E3 [95% CI]", "P1", "LAP pre / post", "cutoff", "REC pre", "δ", "VALID",
                    "robustness"]
FOOTNOTE = ("—ᵍ gated (LAP recall at chance, or δ's own rules: n, lowvar), —ᵏ unidentified under the sample-parity "
            "gate (E1-E3: both sides cover the full windows; P1: D and M cover every post date), "
            f"—ⁿ fewer than {protocol_var('hb_rec_min_n')} parsed REC estimates, "
            "ʳ δ from a rank-deficient design (pseudo-inverse value, not identified); robustness: the checks of "
            "agg_hb_robustness the row fails (window perturbation, cutoff sensitivity, transcript audit, serving stability)")


def markdown(rows_: list[dict]) -> str:
    lines = ["| " + " | ".join(MARKDOWN_COLUMNS) + " |", "|" + " --- |" * len(MARKDOWN_COLUMNS)]
    for row in rows_:
        shown = cells(row)
        lines.append("| " + " | ".join(shown[c] for c in MARKDOWN_COLUMNS) + " |")
    lines += ["", FOOTNOTE + "; E1, the gate outcomes and every ungated value are in the CSV and in agg_hb_audit_rows."]
    return "\n".join(lines)


def _undefined(value) -> bool:
    """An undefined value: NULL in the mart; an empty cell or `nan` in a frozen CSV."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and value.strip().lower() in ("", "nan", "none", "null")


def check(rows_: list[dict], frozen: Path, strict: bool = False) -> tuple[list[str], bool]:
    """Drifting cells against a frozen bench_rows.csv; (messages, failed)."""
    if not frozen.exists():
        raise InputError(frozen, "frozen leaderboard not found", "pass the path of a bench_rows.csv")
    with frozen.open(newline="") as handle:
        published = {r.get("key") or r.get("model_key"): r for r in csv.DictReader(handle)}
    ours = {r["model_key"]: r for r in rows_}
    messages, failed = [], False
    for key in sorted(set(ours) & set(published)):
        for column in PUBLISHED:
            if column not in published[key]:
                continue
            expected, actual = published[key][column], ours[key][column]
            if _undefined(expected) or _undefined(actual):
                same = _undefined(expected) and _undefined(actual)
            else:
                try:
                    same = abs(float(expected) - float(actual)) <= TOLERANCE
                except ValueError:
                    same = str(actual) == expected
            if not same:
                failed = True
                messages.append(f"drift: {key}.{column}: frozen {expected or '(empty)'}, now {_text(actual) or '(empty)'}")
    for key in sorted(set(published) - set(ours)):
        messages.append(f"only in the frozen file: {key}")
    for key in sorted(set(ours) - set(published)):
        messages.append(f"only in the warehouse: {key}")
    if strict and set(published) ^ set(ours):
        failed = True
    return messages, failed
