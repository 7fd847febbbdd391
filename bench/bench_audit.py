"""Benchmark of a whole HindsightBench audit through the runner: the `full`
tier (7,482 calls: smoke, inspection, then the rest) of a new model against a
loopback OpenAI-compatible server in its own process that answers every call
after a fixed delay, at concurrency C; then `hindsight build` to its row. The
ideal collection time is calls / C x delay.

    .venv/bin/python bench/bench_audit.py --concurrency 50 --delay 0.2
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingest.build import build
from ingest.db import connect
from ingest.llm.hb_audit_runner import Registration, register, run_audit
from ingest.llm.simulators.panel import write_panel
from ingest.load.hindsightbench import load_hindsightbench
from ingest.publish.hb_inspection import accept

PROJECT = Path(__file__).resolve().parents[1]
MODEL = "openai:bench-auditee"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="hindsight-audit-"))
    db = folder / "warehouse.duckdb"
    os.environ["HINDSIGHT_DB"] = str(db)
    os.environ.setdefault("OPENAI_API_KEY", "bench-key")
    with connect(db) as con:
        load_hindsightbench(con, write_panel(folder / "panel"))
    if not build(db, ["--select", "+fct_hb_requests", "+int_hb_dates", "model_prices", "hb_registry", "--quiet"]):
        sys.exit("dbt build failed")
    server = subprocess.Popen([sys.executable, str(PROJECT / "tests" / "python" / "fake_llm_server.py"),
                               "--delay", str(args.delay)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
    try:
        with connect(db) as con:
            register(con, Registration("bench-auditee", "openai", MODEL, tier="full"))
            started = time.perf_counter()
            smoke = run_audit(con, MODEL, "smoke", "bench-auditee", url, args.concurrency)
            accept(con, "bench-auditee", "bench")
            full = run_audit(con, MODEL, "full", "bench-auditee", url, args.concurrency)
            seconds = time.perf_counter() - started
            started = time.perf_counter()
            rerun = run_audit(con, MODEL, "full", "bench-auditee", url, args.concurrency)
            rerun_seconds = time.perf_counter() - started
            calls = con.execute("select count(*) from raw.llm_calls where model = ?", [MODEL]).fetchone()[0]
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    started = time.perf_counter()
    built = build(db, ["--quiet"])
    build_seconds = time.perf_counter() - started
    with connect(db, read_only=True) as con:
        cells, e2 = con.execute("select cells, e2_est from agg_hb_audit_rows where model_key = 'bench-auditee'").fetchone()
    calls_asked = smoke.answered + full.answered
    ideal = calls_asked / args.concurrency * args.delay
    figures = {"tier": "full", "concurrency": args.concurrency, "server_delay_s": args.delay, "calls": calls,
               "answered": calls_asked, "failed": smoke.failed + full.failed, "collection_seconds": round(seconds, 2),
               "ideal_seconds": round(ideal, 2), "ratio_to_ideal": round(seconds / ideal, 3),
               "rerun_seconds": round(rerun_seconds, 2), "rerun_calls": rerun.answered,
               "build_ok": built, "build_seconds": round(build_seconds, 2), "row_cells": cells, "row_e2": e2}
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "audit.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
