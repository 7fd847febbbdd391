"""Benchmark: load the real T2S2 folders (scaled by re-loading sepsis-100 as
extra cohorts), 10 questions per case, then `dbt build`. Prints wall time,
throughput and peak memory; writes bench/results/load_build.json.

    .venv/bin/python bench/bench_load_build.py --copies 5
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingest.db import connect
from ingest.load.cases import load_cases
from ingest.load.questions import load_questions

PROJECT = Path(__file__).resolve().parents[1]
DATA = PROJECT.parent / "shared" / "data"

NUMBER = re.compile(r"^\s*([-+]?\d+(\.\d+)?)\s*\\*\s*$")


def h_times(path: Path) -> list[float]:
    times = []
    for line in path.read_text(errors="replace").splitlines():
        parts = line.split("|")
        if len(parts) == 2 and NUMBER.match(parts[1]):
            times.append(float(NUMBER.match(parts[1]).group(1)))
    return sorted(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=5, help="cohorts made of sepsis-100 (100 cases, 2 sources each)")
    args = parser.parse_args()
    s100 = DATA / "t2s2" / "sepsis-100"
    workdir = Path(tempfile.mkdtemp(prefix="hindsight-bench-"))
    db = workdir / "warehouse.duckdb"
    questions = []
    started = time.perf_counter()
    with connect(db) as con:
        records = 0
        for copy in range(args.copies):
            result = load_cases(con, f"copy{copy}", s100 / "body",
                                {"H": s100 / "l33_70b_annotations", "L": s100 / "l31_8b_annotations"})
            records += result.records
        load_seconds = time.perf_counter() - started
        for copy in range(args.copies):
            for path in sorted((s100 / "l33_70b_annotations").glob("*.bsv")):
                case_id = path.stem.removesuffix("_body")
                times = h_times(path) or [0.0]
                for i in range(10):
                    questions.append({
                        "question_id": f"copy{copy}-{case_id}-{i}", "cohort": f"copy{copy}", "case_id": case_id,
                        "question": f"Question {i}?", "format": "true/false", "eval_target": "both",
                        "early_cutoff": {"event": "e", "time": times[len(times) * i // 10]},
                        "correct_answer": "true", "hindsight_trap": "false"})
        qfile = workdir / "questions.jsonl"
        qfile.write_text("".join(json.dumps(q) + "\n" for q in questions))
        q_started = time.perf_counter()
        load_questions(con, qfile)
        question_seconds = time.perf_counter() - q_started
    loader_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    b_started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ingest.cli", "build"], cwd=PROJECT, capture_output=True, text=True,
                          env={**os.environ, "HINDSIGHT_DB": str(db)})
    build_seconds = time.perf_counter() - b_started
    if done.returncode != 0:
        sys.exit("dbt build failed:\n" + done.stdout[-3000:])
    build_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    import duckdb
    with duckdb.connect(str(db), read_only=True) as con:
        n_requests = con.execute("select count(*) from fct_answer_requests").fetchone()[0]
        n_events = con.execute("select count(*) from fct_tts_events").fetchone()[0]
    results = {
        "cohorts": args.copies, "tts_records": records, "valid_events": n_events, "questions": len(questions),
        "answer_requests": n_requests,
        "load_cases_seconds": round(load_seconds, 2), "records_per_second": round(records / load_seconds),
        "load_questions_seconds": round(question_seconds, 2),
        "dbt_build_seconds": round(build_seconds, 2),
        "loader_peak_rss_mb": round(loader_rss_mb), "dbt_peak_rss_mb": round(build_rss_mb),
        "warehouse_mb": round(db.stat().st_size / 2**20, 1),
    }
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "load_build.json").write_text(json.dumps(results, indent=2))
    for key, value in results.items():
        print(f"{key:>24}: {value}")


if __name__ == "__main__":
    main()
