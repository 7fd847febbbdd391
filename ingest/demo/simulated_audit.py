"""A fictional HindsightBench release written by simulated audited models, for
the demo and for checks of the audit marts. Nothing in it is a real model.

The release has the layout `hindsight load hindsightbench` reads: arm cells
R, D, M, W (one replicate, 8 sketches per cell) over the 240 PRE and 18 POST
monthly decision dates, date and LAP probes, the panel dates and a synthetic
S&P 500 forward-return file. Each `AuditedSimulator` plants its behaviour:

- `trigger`: the bearish share rises by this much when the asserted date lies
  in a crisis window (D and R see the true date, W a date shifted 66 PRE
  months), so E2 is about `trigger`, E1 about `reveal`, and E3 is positive
  with `trigger` (diluted: the W data keep the crisis signal of their own
  date, which the true-date keying also picks up);
- `cutoff`: outcome recall (LAP) and date recovery hold up to this month and
  collapse after it, which is the effective cutoff the audit should find;
- `guessing`: LAP answers are coin flips on every date, so the recall hit rate
  is at chance and the cutoff gate must leave the cutoff undefined.

Every draw is a hash of the simulator, the date and the item, so a release is
identical from run to run.
"""
from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ingest.config import protocol_var
from ingest.db import PROJECT_DIR

PRE = [f"{year}-{month:02d}-15" for year in range(2005, 2025) for month in range(1, 13)]


def _monthly(first: str, last: str) -> list[str]:
    """The same day of each month from `first` to `last` (YYYY-MM-DD), as int_hb_dates probes them."""
    year, month, day = map(int, first.split("-"))
    dates = []
    while f"{year}-{month:02d}-{day:02d}" <= last:
        dates.append(f"{year}-{month:02d}-{day:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return dates


POST = _monthly(str(protocol_var("hb_post_first_date")), str(protocol_var("hb_post_last_date")))
SKETCHES_PER_CELL = 8
LAP_REPS = 20


@dataclass(frozen=True)
class AuditedSimulator:
    key: str                 # folder name and model_key, e.g. sim-audit-trigger
    trigger: float
    reveal: float
    cutoff: str | None       # YYYY-MM, or None for a model that only guesses
    recall: float = 0.7      # share of LAP samples that recall the direction before the cutoff

    def uniform(self, *key: object) -> float:
        digest = hashlib.sha256("|".join(map(str, (self.key, *key))).encode()).hexdigest()
        return int(digest[:13], 16) / 16**13


DEMO_AUDITEES = [
    AuditedSimulator("sim-audit-trigger", trigger=0.30, reveal=0.10, cutoff="2024-06"),
    AuditedSimulator("sim-audit-recall-only", trigger=0.0, reveal=0.05, cutoff="2023-04"),
    AuditedSimulator("sim-audit-late", trigger=0.20, reveal=0.0, cutoff="2025-09"),
    AuditedSimulator("sim-audit-guessing", trigger=0.0, reveal=0.0, cutoff=None),
]


def crisis_dates() -> set[str]:
    with (PROJECT_DIR / "seeds" / "hb_date_windows.csv").open(newline="") as handle:
        return {row["decision_date"] for row in csv.DictReader(handle) if row["date_window"] == "crisis"}


def realized_down(date: str, crisis: set[str]) -> bool:
    """Synthetic market: crisis months fall; other months fall one time in three."""
    draw = int(hashlib.sha256(f"market|{date}".encode()).hexdigest()[:8], 16) / 16**8
    return date in crisis or draw < 1 / 3


def _write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def _cell(root: Path, sim: AuditedSimulator, arm: str, date: str, bearish: float) -> None:
    cell = root / sim.key / arm / "rep1" / date
    sketches = [{"hypothesis_id": f"H_{i + 1:03d}", "decision_date": date,
                 "direction": "-" if sim.uniform(arm, date, i) < bearish else "+"}
                for i in range(SKETCHES_PER_CELL)]
    _write_json(cell / "01_sketches_valid.json", sketches)
    _write_json(cell / "03_run_meta.json", {"decision_date": date, "arm": arm, "rep": 1, "model": sim.key,
                                            "valid_count": len(sketches), "invalid_count": 0})


def write_model(root: Path, sim: AuditedSimulator, crisis: set[str]) -> None:
    shift = int(protocol_var("hb_transplant_shift"))
    fake = {date: PRE[(index + shift) % len(PRE)] for index, date in enumerate(PRE)}
    for date in PRE + POST:
        data = 0.30 + (0.25 if realized_down(date, crisis) else 0.0)     # what the data alone suggests
        date_effect = sim.trigger if date in crisis else 0.0
        _cell(root, sim, "M", date, data)
        _cell(root, sim, "D", date, data + date_effect)
        _cell(root, sim, "R", date, data + date_effect + (sim.reveal if date in crisis else 0.0))
        if date in fake:
            _cell(root, sim, "W", date, data + (sim.trigger if fake[date] in crisis else 0.0))
    lap_lines, date_lines = [], []
    for date in PRE + POST:
        known = sim.cutoff is not None and date[:7] <= sim.cutoff
        truth = "down" if realized_down(date, crisis) else "up"
        for rep in range(LAP_REPS):
            draw = sim.uniform("lap", date, rep)
            if sim.cutoff is None:
                answer = "up" if draw < 0.5 else "down"
            elif known:
                answer = truth if draw < sim.recall else "unknown"
            else:
                answer = ("up" if draw < 0.0025 else "down") if draw < 0.005 else "unknown"
            lap_lines.append({"decision_date": date, "rep": rep, "answer": answer, "raw": answer})
        year = int(date[:4])
        if not (known and sim.uniform("rec", date) < 0.6):
            year = 2005 + int(sim.uniform("rec-year", date) * 20)
        estimate = f"{year}-{date[5:7]}"
        date_lines.append({"decision_date": date, "estimated_date": estimate,
                           "raw": json.dumps({"estimated_date": estimate})})
    folder = root / sim.key
    (folder / "lap_probe_results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lap_lines))
    (folder / "date_probe_results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in date_lines))


def write_release(root: Path, auditees: list[AuditedSimulator] = DEMO_AUDITEES) -> Path:
    """Write the fictional release under `root` (overwriting its files); returns `root`."""
    crisis = crisis_dates()
    bench = root / "hindsight" / "outputs" / "bench"
    processed = root / "macrochain" / "data" / "processed"
    processed.mkdir(parents=True, exist_ok=True)
    for sim in auditees:
        write_model(bench, sim, crisis)
    (processed / "sketches_panel.jsonl").write_text(
        "".join(json.dumps({"decision_date": date}) + "\n" for date in PRE))
    returns = [(date, -0.04 if realized_down(date, crisis) else 0.03) for date in PRE + POST]
    con = duckdb.connect()
    con.execute("create table spx (date date, forward_return_20d double)")
    con.executemany("insert into spx values (?, ?)", returns)
    con.execute(f"copy spx to '{processed / 'spx_target_new.parquet'}' (format parquet)")
    con.close()
    return root
