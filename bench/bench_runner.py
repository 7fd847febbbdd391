"""Benchmark of the answer runner against a loopback OpenAI-compatible server
that answers every request after a fixed delay: N requests at concurrency C
should take about N / C x delay (the ideal) plus start-up.

    .venv/bin/python bench/bench_runner.py --requests 2000 --concurrency 50 --delay 0.2
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
from ingest.llm.answer import answer_requests
from ingest.llm.profiles import Overrides
from ingest.load.cases import load_cases
from ingest.load.questions import load_questions

PROJECT = Path(__file__).resolve().parents[1]

DATA = PROJECT.parent / "shared" / "data" / "t2s2" / "sepsis-100"


def warehouse() -> Path:
    db = Path(tempfile.mkdtemp(prefix="hindsight-runner-")) / "warehouse.duckdb"
    with connect(db) as con:
        load_cases(con, "sepsis100", DATA / "body", {"H": DATA / "l33_70b_annotations", "L": DATA / "l31_8b_annotations"})
        questions = [{"question_id": f"{p.stem}-{i}", "case_id": p.stem.removesuffix("_body"), "question": f"Was it sepsis ({i})?",
                      "format": "true/false", "eval_target": "both", "early_cutoff": {"event": "e", "time": 24 * i},
                      "correct_answer": "true", "hindsight_trap": "false"}
                     for p in sorted((DATA / "l33_70b_annotations").glob("*.bsv")) for i in range(10)]
        path = db.parent / "questions.jsonl"
        path.write_text("".join(json.dumps(q) + "\n" for q in questions))
        load_questions(con, path)
    if not build(db, ["--exclude", "resource_type:test", "resource_type:unit_test", "--quiet"]):
        sys.exit("dbt build failed")
    return db


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()
    db = warehouse()
    os.environ.setdefault("OPENAI_API_KEY", "bench-key")
    # the server runs in its own process, as a real one would, so it does not share our GIL
    server = subprocess.Popen([sys.executable, str(PROJECT / "tests" / "python" / "fake_llm_server.py"),
                               "--delay", str(args.delay)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
    try:
        with connect(db) as con:
            started = time.perf_counter()   # start-up: one request, minus the server's delay
            answer_requests(con, "openai:startup", url, limit=1, overrides=Overrides())
            startup = time.perf_counter() - started - args.delay
            started = time.perf_counter()
            summary = answer_requests(con, "openai:bench", url, limit=args.requests,
                                      concurrency=args.concurrency, overrides=Overrides())
            seconds = time.perf_counter() - started
            started = time.perf_counter()
            rerun = answer_requests(con, "openai:bench", url, limit=args.requests,
                                    concurrency=args.concurrency, overrides=Overrides())
            rerun_seconds = time.perf_counter() - started
            calls = con.execute("select count(*) from raw.llm_calls where model = 'openai:bench'").fetchone()[0]
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    ideal = args.requests / args.concurrency * args.delay
    figures = {"requests": args.requests, "concurrency": args.concurrency, "server_delay_s": args.delay,
               "answered": summary.answered, "failed": summary.failed, "distinct_calls": calls,
               "seconds": round(seconds, 2), "ideal_seconds": round(ideal, 2), "ratio_to_ideal": round(seconds / ideal, 3),
               "startup_seconds": round(startup, 2),
               "ratio_to_ideal_after_startup": round((seconds - startup) / ideal, 3),
               "rerun_seconds": round(rerun_seconds, 2), "rerun_calls": rerun.answered}
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "runner.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
