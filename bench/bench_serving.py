"""Serving readers (issue 40): what publishing the marts costs a build, and what readers pay for
reading the snapshot instead of the warehouse.

On a warehouse of S x the paper's cases (bench_metrics.generate):
- the full build, and the publish inside it (the on-run-end hook's own time, from run_results.json),
  in seconds and as a share of the build; the snapshot's size on disk beside the warehouse's;
- an appended model's build, alone and then the same build from the same state with readers at work:
  one opening a connection per query, as Superset does, one holding a pooled connection, each a few
  queries a second;
- three typical BI queries, each the median of REPEAT runs, on the serving file and on the
  warehouse (read-only), with a connection per query and with one kept open.

    .venv/bin/python bench/bench_serving.py --scale 1
    .venv/bin/python bench/bench_serving.py --scale 100
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from bench_metrics import child, generate, model_timings, write_results
from bench_refresh import BUILD, HINDSIGHT, PROJECT, append_model

from ingest.db import serve_path
from ingest.serve import snapshots

READERS = PROJECT / "tests" / "python" / "serving_readers.py"
QUERIES = {
    # a dashboard's metric slice
    "metrics_slice": """select cohort, model, condition, format, options_type, estimate, ci_low, ci_high, significant
                        from agg_metrics_by_format where metric = 'delta_htr' and visibility = 'paired'
                        and prompt_variant = 'standard' order by cohort, model, condition, format""",
    # a chart over the answers: accuracy per model and condition
    "answers_by_cell": """select model, condition, visibility, avg(acc) as acc, avg(htr) as htr, count(*) as n
                          from fct_answers where is_latest_in_cell group by all order by all""",
    # a join of facts and dimensions: answers per question format and cohort
    "answers_by_format": """select q.cohort, q.format, count(*) as answers, avg(a.acc) as acc
                            from fct_answers as a inner join dim_questions as q using (question_id)
                            group by all order by all""",
}
REPEAT = 7
# each reader's pause between queries: two dashboards refreshing a few times a second
READER_PAUSE = 0.2


def latency(path: Path, sql: str, per_query: bool) -> float:
    """Median seconds of REPEAT runs of SQL on PATH, read-only (a connection per query, or one kept)."""
    times, kept = [], None if per_query else duckdb.connect(str(path), read_only=True)
    for _ in range(REPEAT):
        started = time.perf_counter()
        con = duckdb.connect(str(path), read_only=True) if per_query else kept
        con.execute(sql).fetchall()
        if per_query:
            con.close()
        times.append(time.perf_counter() - started)
    if kept:
        kept.close()
    return statistics.median(times)


def hook_seconds(target: Path) -> float:
    return sum(seconds for name, seconds in model_timings(target).items() if "on-run-end" in name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--no-append", action="store_true", help="the full build and the queries only")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="hindsight-serving-"))
    db = folder / "warehouse.duckdb"
    target = folder / "target"
    env = {"HINDSIGHT_DB": str(db), "DBT_TARGET_PATH": str(target)}
    os.environ.update(env)
    figures: dict[str, object] = {"scale": args.scale, "cases": 171 * args.scale}
    figures.update(generate(db, args.scale))
    wall, _ = child(db, [*HINDSIGHT, "build", *BUILD], env)
    publish = hook_seconds(target)
    current = snapshots.current(db)
    figures["full_build"] = {"seconds": round(wall, 1), "publish_seconds": round(publish, 2),
                             "publish_share": round(publish / wall, 3)}
    figures["disk"] = {"warehouse_mb": round(db.stat().st_size / 1e6, 1), "snapshot_mb": round(current.bytes / 1e6, 1),
                       "serving_file_mb": round(serve_path(db).stat().st_size / 1e6, 2),
                       "largest_marts_mb": {m: round(e["bytes"] / 1e6, 1) for m, e in sorted(
                           current.manifest["marts"].items(), key=lambda item: -item[1]["bytes"])[:4]}}

    # BI queries on the serving file against the warehouse (no build running)
    serve = serve_path(db)
    figures["query_seconds"] = {}
    for name, sql in QUERIES.items():
        row = {}
        for mode, per_query in (("connection_per_query", True), ("connection_kept", False)):
            served, live = latency(serve, sql, per_query), latency(db, sql, per_query)
            row[mode] = {"serving": round(served, 4), "warehouse": round(live, 4), "ratio": round(served / live, 2)}
        figures["query_seconds"][name] = row

    # an appended model's build, without readers and then, from the same warehouse state, with them
    if args.no_append:
        return write_results(f"serving_scale{args.scale}.json", figures)
    append_model(db, args.scale)
    before = folder / "before-append.duckdb"
    shutil.copy(db, before)
    wall, _ = child(db, [*HINDSIGHT, "build", *BUILD], env)
    figures["append_build"] = {"seconds": round(wall, 1), "publish_seconds": round(hook_seconds(target), 2)}
    shutil.copy(before, db)             # the same build again, the same work, while readers query
    stop, logs = folder / "stop", folder / "readers"
    logs.mkdir()
    readers = [subprocess.Popen([sys.executable, str(READERS), kind, str(serve), str(logs / f"{kind}.jsonl"), str(stop),
                                 str(READER_PAUSE)], cwd=PROJECT) for kind in ("per-query", "pooled")]
    try:
        time.sleep(1)
        wall, _ = child(db, [*HINDSIGHT, "build", *BUILD], env)
    finally:
        stop.touch()
        for reader in readers:
            reader.wait(timeout=120)
    records = [json.loads(line) for path in logs.glob("*.jsonl") for line in path.read_text().splitlines()]
    figures["append_build_with_readers"] = {
        "seconds": round(wall, 1), "publish_seconds": round(hook_seconds(target), 2),
        "vs_without": round(wall / figures["append_build"]["seconds"], 3),
        "reader_queries": len(records), "reader_queries_per_second": round(len(records) / wall, 1),
        "failed_queries": sum(1 for r in records if r["error"])}
    write_results(f"serving_scale{args.scale}.json", figures)


if __name__ == "__main__":
    main()
