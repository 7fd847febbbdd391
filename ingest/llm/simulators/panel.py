"""A fictional HindsightBench panel for the demo: the release's prompt inputs in
its layout, with made-up numbers, so the whole collection path (requests built
by dbt, simulated auditees asked through the runner, replies parsed and
scored) runs without the release. Nothing in it is real data.

Written under a root: `macrochain/data/processed/` holds the 240 pre-cutoff V1
requests (`sketch_batch_requests.jsonl`, the release's text layout: date line,
target-panel summary, metadata and 8 vintage snapshot lines), the panel dates
and a synthetic S&P 500 file (weekday sessions; crisis months fall, others one
time in three); `hindsight/outputs/fm1c/postcutoff_snapshots.json` the 18
post-cutoff snapshots. The text passes the release's fail-closed leak check.
"""
from __future__ import annotations

import hashlib
import json
from datetime import date, timedelta
from pathlib import Path

import duckdb

from ingest.llm.simulators.auditees import crisis_dates

PRE = [f"{year}-{month:02d}-15" for year in range(2005, 2025) for month in range(1, 13)]
POST = [f"{year}-{month:02d}-15" for year, months in ((2025, range(1, 13)), (2026, range(1, 7))) for month in months]
SERIES = ("CPIAUCSL", "FEDFUNDS", "GDPC1", "HOUST", "INDPRO", "PAYEMS", "RSAFS", "UNRATE")
SYSTEM = """You are a macro-financial researcher (simulated demo panel). Given a point-in-time evidence
snapshot, propose structured mechanism hypotheses explaining how macroeconomic signals
drive S&P 500 forward returns. OUTPUT FORMAT: a single JSON array of hypothesis objects."""


def _uniform(*key: object) -> float:
    return int(hashlib.sha256("|".join(map(str, key)).encode()).hexdigest()[:8], 16) / 16**8


def realized_down(day: str, crisis: set[str]) -> bool:
    """Synthetic market: crisis months fall; other months fall one time in three."""
    return day in crisis or _uniform("market", day[:7] + "-15") < 1 / 3


def _vintage(day: str, series: str) -> tuple[str, str, str]:
    """(vintage date, vintage value, revised value) of a made-up series at a decision date."""
    year, month = int(day[:4]), int(day[5:7])
    lag = 3 if series == "GDPC1" else 1
    month -= lag
    if month < 1:
        year, month = year - 1, month + 12
    level = round(100 + (year - 2005) * 3 + month * 0.2 + 10 * _uniform(series, day), 1)
    while "65.5" in f"{level:.1f}":      # the leak check forbids the base rate's digits anywhere
        level += 0.1
    return f"{year}-{month:02d}-01", f"{level:.1f}", f"{level * 1.01:.1f}"


def user_text(day: str, snapshot: dict[str, tuple[str, str, str]]) -> str:
    lines = [f"        Decision time point: {day} - only information available on or before this date is admissible as evidence.",
             "", "        ## Observable Catalog (simulated demo panel)", "",
             f"        [AVAILABLE_COLUMNS] = [{', '.join(SERIES)}]", "",
             "        CPIAUCSL    | monetary  | monthly   | Index 1982-1984=100", "",
             "        ## Target Panel Summary (S&P 500 forward 20-day returns)", "",
             "  Date range    : 2005-01-03 -> 2024-12-31", "  Total sessions: 5,033",
             "  Positive days : 65.5%  (20d forward return >= 0)", "  Negative days : 34.1%", "  Pos/Neg ratio : 1.925",
             "  Latest macro snapshot used for prompt context:", f"    decision_date_used: {day}",
             "    model_ready_panel_rows: 1000"]
    lines += [f"    - {series}: vintage_date={vintage}, vintage_value={value}, revised_value={revised}"
              for series, (vintage, value, revised) in sorted(snapshot.items())]
    lines += ["", "        ## Task", "", "        Generate exactly 8 hypothesis sketches as a JSON array.",
              "        Each needs direction (+ or -), mechanism_narrative, candidate_proxies and regime_hint.",
              "        Output ONLY the JSON array - nothing else."]
    return "\n".join(lines) + "\n"


def write_panel(root: Path) -> Path:
    """Write the fictional panel under `root` (overwriting its files); returns `root`."""
    crisis = crisis_dates()
    processed = root / "macrochain" / "data" / "processed"
    processed.mkdir(parents=True, exist_ok=True)
    requests = []
    for index, day in enumerate(PRE, start=1):
        text = user_text(day, {series: _vintage(day, series) for series in SERIES})
        requests.append({"key": f"sketch_{index:03d}_{day.replace('-', '')}",
                         "request": {"contents": [{"role": "user", "parts": [{"text": text}]}],
                                     "systemInstruction": {"parts": [{"text": SYSTEM}]}}})
    (processed / "sketch_batch_requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    (processed / "sketches_panel.jsonl").write_text("".join(json.dumps({"decision_date": d}) + "\n" for d in PRE))
    snapshots = {day: {series: dict(zip(("vintage_date", "vintage_value", "revised_value"), _vintage(day, series)))
                       for series in SERIES} for day in POST}
    fm1c = root / "hindsight" / "outputs" / "fm1c"
    fm1c.mkdir(parents=True, exist_ok=True)
    (fm1c / "postcutoff_snapshots.json").write_text(json.dumps({"note": "simulated demo panel", "snapshots": snapshots}))
    sessions, day = [], date(2005, 1, 3)
    while day <= date(2026, 4, 8):
        if day.weekday() < 5:
            sessions.append(day)
        day += timedelta(days=1)
    returns = [(d, None if i >= len(sessions) - 20 else
                (-0.04 if realized_down(f"{d:%Y-%m}-15", crisis) else 0.03)) for i, d in enumerate(sessions)]
    con = duckdb.connect()
    con.execute("create table spx (date date, forward_return_20d double)")
    con.executemany("insert into spx values (?, ?)", returns)
    con.execute(f"copy spx to '{processed / 'spx_target_new.parquet'}' (format parquet)")
    con.close()
    return root
