"""Serving readers (issue 40): what publishing the marts costs a build, and what readers pay for
reading the snapshot instead of the warehouse.

On a warehouse of S x the paper's cases (bench_metrics.generate):
- the full build, its peak memory, and the publish inside it (the on-run-end hook's own time, from
  run_results.json), in seconds and as a share of the build, each against its floor timed in the
  same run (bench_refresh.write_floor: the build's stored tables and the snapshot's marts written from
  rows held in memory; the publish against the Parquet part); the snapshot's size on disk;
- an appended model's build, alone and then the same build from the same state with readers at work:
  one opening a connection per query, as Superset does, one holding a pooled connection, each a few
  queries a second;
- after three publishes (the full build and two appends, every slot still in live/), typical BI
  queries through the serving file against the same queries over the current snapshot's Parquet
  files read directly (the floor a view can reach), each the median of REPEAT runs under DuckDB's
  3 GB memory limit, with a connection per query and with one kept open.

    .venv/bin/python bench/bench_serving.py --scale 1
    .venv/bin/python bench/bench_serving.py --scale 100
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from bench_metrics import child, generate, model_timings, write_results
from bench_refresh import BUILD, HINDSIGHT, PROJECT, append_model, write_floor

from ingest.db import serve_path
from ingest.serve import snapshots

READERS = PROJECT / "tests" / "python" / "serving_readers.py"
QUERIES = {
    # a dashboard's metric slice
    "metrics_slice": """select cohort, model, condition, format, options_type, estimate, ci_low, ci_high, significant
                        from agg_metrics_by_format where metric = 'delta_htr' and visibility = 'paired'
                        and prompt_variant = 'standard' order by cohort, model, condition, format""",
    # the first query: accuracy per model and condition over every answer
    "accuracy_by_model_condition": "select model, condition, avg(acc) as acc from fct_answers group by all order by all",
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


MEMORY = {"memory_limit": "3GB"}


def serving(serve: Path):
    return lambda: duckdb.connect(str(serve), read_only=True, config=MEMORY)


def snapshot_files(db: Path, sql: str):
    """Connections that read the current snapshot's Parquet files directly: a view naming its files
    for each mart SQL reads."""
    now = snapshots.current(db)
    views = {mart: view for mart, view in snapshots.serving_views(db, now.manifest["marts"], pinned=now.id).items()
             if re.search(rf"\b{mart}\b", sql)}

    def connect() -> duckdb.DuckDBPyConnection:
        con = duckdb.connect(config=MEMORY)
        for mart, view in views.items():
            con.execute(f'create view "{mart}" as {view}')
        return con
    return connect


def latency(connect, sql: str, per_query: bool) -> float:
    """Median seconds of REPEAT runs of SQL on connections from CONNECT (one per query, or one kept)."""
    times, kept = [], None if per_query else connect()
    for _ in range(REPEAT):
        started = time.perf_counter()
        con = connect() if per_query else kept
        con.execute(sql).fetchall()
        if per_query:
            con.close()
        times.append(time.perf_counter() - started)
    if kept:
        kept.close()
    return statistics.median(times)


def query_seconds(db: Path) -> dict[str, dict]:
    """Each query through the serving file against the current snapshot's files read directly."""
    figures = {}
    for name, sql in QUERIES.items():
        row = {}
        for mode, per_query in (("connection_per_query", True), ("connection_kept", False)):
            served, direct = latency(serving(serve_path(db)), sql, per_query), latency(snapshot_files(db, sql), sql, per_query)
            row[mode] = {"serving": round(served, 4), "snapshot_files": round(direct, 4), "ratio": round(served / direct, 2)}
        figures[name] = row
    return figures


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
    wall, rss = child(db, [*HINDSIGHT, "build", *BUILD], env)
    publish = hook_seconds(target)
    current = snapshots.current(db)
    # the floor under it, timed in the same run: writing the rows the build keeps, and the marts
    floor = write_floor(db, folder)
    figures["full_build"] = {"seconds": round(wall, 1), "peak_rss_mb": round(rss), "publish_seconds": round(publish, 2),
                             "publish_share": round(publish / wall, 3), "write_floor": floor,
                             "vs_write_floor": round(wall / (floor["stored_s"] + floor["published_s"]), 2),
                             "publish_vs_parquet_floor": round(publish / floor["published_s"], 2),
                             "publish_slowest_marts_s": {mart: entry["publish_seconds"] for mart, entry in sorted(
                                 current.manifest["marts"].items(), key=lambda item: -item[1].get("publish_seconds", 0))[:6]}}
    figures["disk"] = {"warehouse_mb": round(db.stat().st_size / 1e6, 1), "snapshot_mb": round(current.bytes / 1e6, 1),
                       "serving_file_mb": round(serve_path(db).stat().st_size / 1e6, 2),
                       "largest_marts_mb": {m: round(e["bytes"] / 1e6, 1) for m, e in sorted(
                           current.manifest["marts"].items(), key=lambda item: -item[1]["bytes"])[:4]}}

    # an appended model's build, without readers and then, from the same warehouse state, with them
    if args.no_append:
        figures["query_seconds_after_one_publish"] = query_seconds(db)
        return write_results(f"serving_scale{args.scale}.json", figures)
    append_model(db, args.scale)
    before = folder / "before-append.duckdb"
    shutil.copy(db, before)
    wall, rss = child(db, [*HINDSIGHT, "build", *BUILD], env)
    figures["append_build"] = {"seconds": round(wall, 1), "peak_rss_mb": round(rss), "publish_seconds": round(hook_seconds(target), 2),
                               "share_of_full_build": round(wall / figures["full_build"]["seconds"], 3)}
    shutil.copy(before, db)             # the same build again, the same work, while readers query
    stop, logs = folder / "stop", folder / "readers"
    logs.mkdir()
    readers = [subprocess.Popen([sys.executable, str(READERS), kind, str(serve_path(db)), str(logs / f"{kind}.jsonl"), str(stop),
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
    # BI queries after three publishes: the serving views against the snapshot's own files
    figures["slots_in_live"] = len(snapshots.live_slots(db, "fct_answers"))
    figures["query_seconds"] = query_seconds(db)
    write_results(f"serving_scale{args.scale}.json", figures)


if __name__ == "__main__":
    main()
