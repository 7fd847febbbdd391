"""The clinical marts on Spark beside DuckDB, at S x the paper's cases (bench_metrics.generate: 4
models x 13 cells x 2 prompt variants x 10 questions per case; 100x is 17.8 M answers).

For each scale, in the same run on this machine: DuckDB's full build and the build after appending
one paper-scale model (bench_refresh.append_model: 44,460 answers); then the same two on Spark through
`hindsight build --target spark` (the landing-zone export included), in-process on local[2]; at the
scales of --standalone-at, the full build also on a standalone master with two one-core workers
(ingest/spark/server.py). Peak memory: DuckDB's process; the JVMs' summed resident memory (driver,
and executors on the cluster) and the Python workers' (the table functions), sampled every half
second. Per Spark build, dbt's own timing of each node (run_results.json): the interval step (the
models that call the estimators' table functions), the publish, the slowest nodes, and the nodes'
count; and per mart published by partition, how many partitions its store holds and how many the
build wrote.

    .venv/bin/python bench/bench_spark.py --scale 100 --scale 10 --scale 1 --standalone-at 10
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_metrics import child, generate
from bench_rebuild import run_results
from bench_refresh import BUILD, append_model

from ingest.spark.server import standalone_cluster

PROJECT = Path(__file__).resolve().parents[1]
HINDSIGHT = [sys.executable, "-m", "ingest.cli"]


# the nodes that run the estimators on the executors (ingest/spark/functions.py)
INTERVAL_NODES = ("int_metric_estimates", "int_metric_estimates_by_eval_target", "int_validation_agreement")


def rss_mb(names: tuple[str, ...] = ("java",)) -> float:
    """The summed resident memory of every process named NAMES on this machine, in MB."""
    total = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
            if not any(f"\nName:\t{name}\n" in "\n" + text for name in names):
                continue
            total += int(next(line.split()[1] for line in text.splitlines() if line.startswith("VmRSS:")))
        except (OSError, StopIteration):
            continue
    return total / 1024


def node_times(target: Path) -> dict[str, object]:
    """dbt's seconds per node of the build whose DBT_TARGET_PATH is TARGET: the interval step's, the
    snapshot publish's (the on-run-end hook), each node kind's, the slowest twelve, and the total."""
    results = json.loads((target / "run_results.json").read_text())["results"]
    seconds = {r["unique_id"].split(".")[-1]: r["execution_time"] for r in results}
    total = sum(seconds.values())
    interval = sum(t for name, t in seconds.items() if name in INTERVAL_NODES)
    return {"nodes": len(seconds), "node_seconds": round(total, 1), "interval_seconds": round(interval, 1),
            "publish_seconds": round(seconds.get("hindsight-on-run-end-0", 0.0), 1),
            "per_kind": run_results(target)["per_kind"],
            "slowest": {name: round(t, 1) for name, t in sorted(seconds.items(), key=lambda kv: -kv[1])[:12]}}


def timed_spark_build(db: Path, env: dict[str, str]) -> dict[str, object]:
    """`hindsight build --target spark` in a child: wall seconds, the JVMs' and the Python workers'
    peak summed RSS (dbt, the Spark client and the table functions' workers; not this bench), and dbt's timing of its nodes."""
    peak, workers, done = [0.0], [0.0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb())
            workers[0] = max(workers[0], rss_mb(("python", "python3", "python3.11")) - own_rss_mb())
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    result = subprocess.run([*HINDSIGHT, "build", "--target", "spark", *BUILD], cwd=PROJECT, capture_output=True, text=True,
                            env={**os.environ, "HINDSIGHT_DB": str(db), **env})
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    if result.returncode != 0:
        sys.exit(result.stdout[-4000:] + result.stderr[-4000:])
    return {"seconds": round(wall, 1), "jvm_peak_rss_mb": round(peak[0]), "python_peak_rss_mb": round(workers[0]),
            **node_times(Path(env["DBT_TARGET_PATH"])),
            "partitions_published": partitions_published(Path(env["HINDSIGHT_SPARK_WAREHOUSE"]), time.time() - wall)}


def partitions_published(catalog: Path, since: float) -> dict[str, dict[str, int]]:
    """Per partitioned mart's serving store (macro spark_publish_partitions), its partitions and those
    a build begun at SINCE (epoch seconds) wrote: the folders made since."""
    found = {}
    for store in sorted((catalog / "warehouse" / "serving_parts.db").glob("*")):
        parts = list(store.glob("publish_part=*"))
        found[store.name] = {"partitions": len(parts), "written": sum(part.stat().st_mtime >= since for part in parts)}
    return found


def own_rss_mb() -> float:
    """This bench's own resident memory, which the Python processes' sum leaves out."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def one_scale(scale: int, engines: list[str], folder: Path, keep) -> dict[str, object]:
    """The figures of one scale; KEEP(figures) writes them after each build, so a stopped run keeps them."""
    print(f"bench_spark: {scale}x on {', '.join(engines)}", file=sys.stderr, flush=True)
    db = folder / f"scale{scale}.duckdb"
    figures: dict[str, object] = {"scale": scale, "cases": 171 * scale}
    figures.update(generate(db, scale))
    wall, rss = child(db, [*HINDSIGHT, "build", *BUILD])
    figures["duckdb_full"] = {"seconds": round(wall, 1), "peak_rss_mb": round(rss)}
    keep(figures)
    spark_env = {engine: {"HINDSIGHT_SPARK_WAREHOUSE": str(folder / f"scale{scale}-{engine}.spark"),
                          "HINDSIGHT_LANDING": str(folder / f"scale{scale}-landing"),
                          "DBT_TARGET_PATH": str(folder / f"scale{scale}-{engine}.target")} for engine in engines}
    cluster = None
    if "standalone" in engines:
        cluster = standalone_cluster(folder / f"scale{scale}-cluster", workers=2, cores=1, memory="6g")
        spark_env["standalone"]["HINDSIGHT_SPARK_MASTER"] = cluster.__enter__().url
        spark_env["standalone"]["HINDSIGHT_SPARK_MEMORY"] = "3g"
    try:
        for engine in engines:
            figures[f"spark_{engine}_full"] = timed_spark_build(db, spark_env[engine])
            keep(figures)
    finally:
        if cluster is not None:         # the cluster is timed on the full build only (one deployment check)
            cluster.__exit__(None, None, None)
    figures["appended_answers"] = append_model(db, scale)
    wall, rss = child(db, [*HINDSIGHT, "build", *BUILD])
    figures["duckdb_append"] = {"seconds": round(wall, 1), "peak_rss_mb": round(rss)}
    keep(figures)
    figures["spark_local_append"] = timed_spark_build(db, spark_env["local"])
    keep(figures)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, action="append", help="S x the paper's cases (repeatable; default 1 and 10)")
    parser.add_argument("--standalone-at", type=int, action="append", default=[],
                        help="also build this scale on a two-worker standalone cluster (repeatable)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="hindsight-spark-"))
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    results = []

    def keep(figures: dict) -> None:
        (out / "spark.json").write_text(json.dumps([*results, figures], indent=2))

    for scale in args.scale or [1, 10]:
        results.append(one_scale(scale, ["local", "standalone"] if scale in args.standalone_at else ["local"], folder, keep))
        shutil.rmtree(folder, ignore_errors=True)                            # a 100x warehouse and its copies: tens of GB
        folder.mkdir()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
