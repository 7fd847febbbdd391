"""Collect in parallel: four `hindsight answer` processes at once against one loopback OpenAI-compatible
server (its own process, each call answered after --delay), with `hindsight build` every --build-every
seconds meanwhile; then the store's cost per call.

    .venv/bin/python bench/bench_parallel.py --warehouse /tmp/demo/warehouse.duckdb --delay 0.05 --samples 4

The four runs: model A, model B, and model C's conditions split between two processes (0, 1.1, 1.2
and 2.1, 2.2), each at --concurrency 8. Measured: one run of A alone (calls per second), the four
together (their calls per second over the wall time: the issue asks 3.6x one run's), every call sent
once (the server's count of requests equals the distinct calls stored, and no call is stored twice),
every build meanwhile passing. Then the store's cost per call: the same calls answered in process
through the warehouse (1.0.0's path) and through the runs' store, with the server answering at once.
The figures go to bench/results/parallel.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
SERVER = PROJECT / "tests" / "python" / "fake_llm_server.py"
RUNS = [("openai:A", None), ("openai:B", None), ("openai:C", "0,1.1,1.2"), ("openai:C", "2.1,2.2")]


def copy_warehouse(source: Path) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="hindsight-parallel-"))
    for path in source.parent.iterdir():
        if path.name.startswith(source.stem) and not path.name.endswith(".calls.sqlite"):
            (shutil.copytree if path.is_dir() else shutil.copy2)(path, folder / path.name)
    return folder / source.name


def hindsight(db: Path, *args: str) -> subprocess.Popen:
    """The command in its own process, its output in files (a pipe left unread would stall it)."""
    env = {**os.environ, "HINDSIGHT_DB": str(db), "OPENAI_API_KEY": "bench-key", "HINDSIGHT_LOCK_WAIT": "600"}
    out = tempfile.TemporaryFile("w+")
    err = tempfile.TemporaryFile("w+")
    process = subprocess.Popen([sys.executable, "-m", "ingest.cli", *args], env=env, cwd=db.parent, stdout=out, stderr=err, text=True)
    process.out, process.err = out, err
    return process


def output(process: subprocess.Popen) -> tuple[str, str]:
    process.wait()
    process.out.seek(0)
    process.err.seek(0)
    return process.out.read(), process.err.read()


def answer(db: Path, url: str, model: str, conditions: str | None, samples: int, concurrency: int) -> subprocess.Popen:
    args = ["answer", "--model", model, "--base-url", url, "--concurrency", str(concurrency), "--samples", str(samples)]
    return hindsight(db, *args, *(["--conditions", conditions] if conditions else []))


def served(server: subprocess.Popen) -> int:
    server.stdin.write("count\n")
    server.stdin.flush()
    return int(server.stdout.readline())


def stored(db: Path) -> tuple[int, int]:
    """(ledger rows, distinct calls) of the run's store."""
    con = sqlite3.connect(db.parent / f"{db.stem}.calls.sqlite")
    try:
        return con.execute("select count(*), count(distinct call_id) from raw_llm_calls "
                           "where model like 'openai:%' and status = 'ok'").fetchone()
    finally:
        con.close()


def run_rates(db: Path, models: set[str]) -> list[float]:
    """Each run's own calls per second (its calls over its own start to end, from the runs' store)."""
    con = sqlite3.connect(db.parent / f"{db.stem}.calls.sqlite", detect_types=sqlite3.PARSE_DECLTYPES)
    try:
        rows = con.execute("select model, done, started_at, finished_at from runs where state = 'finished'").fetchall()
    finally:
        con.close()
    from datetime import datetime

    return [done / (datetime.fromisoformat(str(end)) - datetime.fromisoformat(str(start))).total_seconds()
            for model, done, start, end in rows if model in models]


def per_call_overhead(db: Path, url: str, calls: int) -> dict:
    """Seconds per call of the same calls through the warehouse and through the store (in process, a
    server that answers at once: what is left is the client's and the storage's time)."""
    from ingest.collect.connection import run_connection
    from ingest.db import connect
    from ingest.llm.answer import answer_requests
    from ingest.llm.profiles import Overrides

    os.environ["HINDSIGHT_DB"], os.environ["OPENAI_API_KEY"] = str(db), "bench-key"
    timings = {}
    for way in ("warehouse", "store", "warehouse", "store"):
        model = f"openai:overhead-{way}-{len(timings)}"
        started = time.perf_counter()
        if way == "warehouse":
            with connect(db) as con:
                summary = answer_requests(con, model, url, overrides=Overrides(samples=max(1, calls // 1440)), concurrency=16)
        else:
            with run_connection("answer", model, warehouse=db) as con:
                summary = answer_requests(con, model, url, overrides=Overrides(samples=max(1, calls // 1440)), concurrency=16)
        seconds = time.perf_counter() - started
        timings.setdefault(way, []).append(seconds / max(summary.answered, 1))
    best = {way: min(values) for way, values in timings.items()}
    return {"warehouse_ms_per_call": round(best["warehouse"] * 1000, 3), "store_ms_per_call": round(best["store"] * 1000, 3),
            "store_extra_ms_per_call": round((best["store"] - best["warehouse"]) * 1000, 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warehouse", type=Path, required=True, help="a built warehouse (the demo's), copied")
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--build-every", type=float, default=30.0)
    parser.add_argument("--overhead-calls", type=int, default=4320, help="calls of each pass of the per-call cost")
    args = parser.parse_args()
    db = copy_warehouse(args.warehouse.resolve())
    server = subprocess.Popen([sys.executable, str(SERVER), "--delay", str(args.delay)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
    try:
        # one run alone
        started = time.perf_counter()
        solo = answer(db, url, "openai:solo", None, args.samples, args.concurrency)
        out, err = output(solo)
        solo_seconds = time.perf_counter() - started
        assert solo.returncode == 0, err[-2000:]
        solo_calls = served(server)
        # four at once, with builds meanwhile
        before = served(server)
        started = time.perf_counter()
        runs = [answer(db, url, model, conditions, args.samples, args.concurrency) for model, conditions in RUNS]
        builds, next_build, building, ended = [], started + args.build_every, None, {}
        # the runs timed by their own ends; a build every --build-every seconds meanwhile, in its own process
        while any(run.poll() is None for run in runs) or building is not None:
            now = time.perf_counter()
            ended.update({i: now for i, run in enumerate(runs) if run.poll() is not None and i not in ended})
            if building is not None and building[0].poll() is not None:
                process, began = building
                _, err = output(process)
                builds.append({"at_s": round(began - started, 1), "seconds": round(now - began, 1), "ok": process.returncode == 0,
                               "brought": [line for line in err.splitlines() if "brought in" in line]})
                building, next_build = None, now + args.build_every
            if building is None and now >= next_build and any(run.poll() is None for run in runs):
                building = (hindsight(db, "build", "--exclude", "resource_type:test", "resource_type:unit_test"), now)
            time.sleep(0.1)
        parallel_seconds = max(ended.values()) - started
        for run in runs:
            _, err = output(run)
            assert run.returncode == 0, err[-2000:]
        parallel_calls = served(server) - before
        rows, distinct = stored(db)
        final = hindsight(db, "build", "--exclude", "resource_type:test", "resource_type:unit_test")
        output(final)
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    instant = subprocess.Popen([sys.executable, str(SERVER), "--delay", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    try:
        overhead = per_call_overhead(copy_warehouse(args.warehouse.resolve()),
                                     f"http://127.0.0.1:{instant.stdout.readline().strip()}/v1", args.overhead_calls)
    finally:
        instant.stdin.close()
        instant.wait(timeout=10)
    solo_rate, parallel_rate = solo_calls / solo_seconds, parallel_calls / parallel_seconds
    rates = run_rates(db, {model for model, _ in RUNS})
    figures = {"server_delay_s": args.delay, "concurrency": args.concurrency, "samples": args.samples,
               "solo": {"calls": solo_calls, "seconds": round(solo_seconds, 2), "calls_per_s": round(solo_rate, 1)},
               "parallel": {"runs": len(RUNS), "calls": parallel_calls, "seconds": round(parallel_seconds, 2),
                            "calls_per_s": round(parallel_rate, 1)},
               # each run's own calls per second, summed: the four runs' throughput together (the split
               # model's two runs have half the calls each, so the wall time is the whole ones')
               "runs_calls_per_s": [round(rate, 1) for rate in rates], "together_calls_per_s": round(sum(rates), 1),
               "throughput_ratio": round(sum(rates) / run_rates(db, {"openai:solo"})[0], 2),
               "wall_ratio": round(parallel_rate / solo_rate, 2),
               "ledger_rows_ok": rows, "distinct_calls_ok": distinct, "requests_served": solo_calls + parallel_calls,
               "every_call_sent_once": rows == distinct == solo_calls + parallel_calls,
               "builds_meanwhile": builds, "all_builds_ok": all(b["ok"] for b in builds),
               "final_build_ok": final.returncode == 0, **overhead}
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "parallel.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
