"""The leaderboard's drift check and gates, on every row of the published bench_rows.csv: the
warehouse represents an undefined value as NULL and a count of nothing as 0, the release writes an
empty cell or `nan` and 0; the Markdown shows every gate the warehouse computes, named in the cell."""
from __future__ import annotations

import csv

import pytest

from conftest import require_shared
from ingest.publish import leaderboard

COUNTS = {"rec_pre_n", "rec_post_n", "recall_n", "delta_n", "cells"}


def published_rows():
    path = require_shared("hindsightbench", "hindsight", "outputs", "bench", "bench_rows.csv")
    with path.open(newline="") as handle:
        return path, list(csv.DictReader(handle))


def as_mart_row(published: dict) -> dict:
    """A published row as agg_hb_audit_rows holds it (HINDSIGHTBENCH_SPEC.md): NULL where a value
    is undefined, counts as integers, months as text."""
    row = {"model_key": published["key"]}
    for column in leaderboard.PUBLISHED:
        text = published[column].strip()
        if text.lower() in ("", "nan"):
            row[column] = None
        elif column in COUNTS:
            row[column] = int(text)
        elif column == "empirical_cutoff":
            row[column] = text
        else:
            row[column] = float(text)
    return row


@pytest.mark.real_data
def test_the_drift_check_passes_on_every_published_row():
    path, rows = published_rows()
    assert len(rows) == 15
    assert any(r["p1_calendar"] == "nan" for r in rows) and any(r["rec_post_n"] == "0" for r in rows)
    messages, failed = leaderboard.check([as_mart_row(r) for r in rows], path, strict=True)
    assert (messages, failed) == ([], False)


@pytest.mark.real_data
@pytest.mark.parametrize("column, value", [("p1_calendar", 0.01), ("rec_post_n", None), ("e2_est", 0.3)])
def test_the_drift_check_still_sees_a_change(column, value):
    path, rows = published_rows()
    ours = [as_mart_row(r) for r in rows]
    target = next(r for r in ours if r["model_key"] == ("gemini-2.5-pro" if column == "p1_calendar" else "kimi-k2.6"))
    target[column] = value
    messages, failed = leaderboard.check(ours, path)
    assert failed and len(messages) == 1 and f"{target['model_key']}.{column}" in messages[0]


def gated_row(**changes) -> dict:
    row = {"model_key": "m", "display": "M", "generation": 2025, "p1_mode": "calendar", "p1_calendar": 0.05,
           "p1_model_relative": None, "lap_pre": 0.5, "lap_post": 0.1, "recall_hit_rate": 0.52,
           "empirical_cutoff": "2024-06", "lap_at_chance": False, "rec_pre_year": 0.9, "rec_post_year": 0.8,
           "delta": -0.359, "delta_t": -2.1, "delta_gate": None, "delta_rank_deficient": False,
           "valid_sketch_rate": 1.0, "p1_parity": True}
    for key in ("e1", "e2", "e3"):
        row.update({f"{key}_est": 0.1, f"{key}_lo": 0.0, f"{key}_hi": 0.2, f"{key}_parity": True})
    return {**row, **changes}


def test_every_computed_gate_is_applied_and_named_in_the_markdown():
    assert leaderboard.cells(gated_row())["δ"] == "-0.359"
    at_chance = leaderboard.cells(gated_row(lap_at_chance=True))
    assert at_chance["δ"] == "—ᵍ (LAP at chance)" and at_chance["δ t"] == "—"     # no LAP signal, no delta
    assert at_chance["cutoff"] == "—ᵍ (LAP at chance)"
    assert leaderboard.cells(gated_row(delta=None, delta_t=None, delta_gate="lowvar"))["δ"] == "—ᵍ (lowvar)"
    assert leaderboard.cells(gated_row(p1_parity=False))["P1"] == "—ᵏ (sample parity)"
    assert leaderboard.cells(gated_row(e2_parity=False))["E2 [95% CI]"] == "—ᵏ (sample parity)"
    assert leaderboard.cells(gated_row(rec_pre_year=None))["REC pre"] == "—ⁿ"
    assert leaderboard.cells(gated_row(delta_rank_deficient=True))["δ"] == "-0.359ʳ"
    # the CSV keeps every ungated value
    assert "δ" not in leaderboard.PUBLISHED and "delta" in leaderboard.PUBLISHED
