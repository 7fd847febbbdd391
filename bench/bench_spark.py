"""The clinical marts on Spark beside DuckDB, at S x the paper's cases (bench_metrics.generate: 4
models x 13 cells x 2 prompt variants x 10 questions per case; 100x is 17.8 M answers).

For each scale, in the same run on this machine: DuckDB's full build and the build after appending
one paper-scale model (bench_refresh.append_model: 44,460 answers); then the same two on Spark through
`hindsight build --target spark` (the landing-zone export included), in-process on local[2] and on a
standalone master with two one-core workers (ingest/spark/server.py). Peak memory: DuckDB's process;
the JVMs' summed resident memory (driver, and executors on the cluster), sampled every half second.

    .venv/bin/python bench/bench_spark.py --scale 1 --scale 10
    .venv/bin/python bench/bench_spark.py --scale 100 --engines local      # hours on 2 cores (docs/spark.md)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_metrics import child, generate
from bench_refresh import BUILD, append_model

from ingest.spark.server import standalone_cluster

PROJECT = Path(__file__).resolve().parents[1]
HINDSIGHT = [sys.executable, "-m", "ingest.cli"]


def java_rss_mb() -> float:
    """The summed resident memory of every JVM on this machine, in MB."""
    total = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
            if "\nName:\tjava\n" not in "\n" + text:
                continue
            total += int(next(line.split()[1] for line in text.splitlines() if line.startswith("VmRSS:")))
        except (OSError, StopIteration):
            continue
    return total / 1024


def timed_spark_build(db: Path, env: dict[str, str]) -> dict[str, float]:
    """`hindsight build --target spark` in a child: wall seconds and the JVMs' peak summed RSS."""
    peak, done = [0.0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], java_rss_mb())
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
    return {"seconds": round(wall, 1), "jvm_peak_rss_mb": round(peak[0])}


def one_scale(scale: int, engines: list[str], folder: Path) -> dict[str, object]:
    db = folder / f"scale{scale}.duckdb"
    figures: dict[str, object] = {"scale": scale, "cases": 171 * scale}
    figures.update(generate(db, scale))
    wall, rss = child(db, [*HINDSIGHT, "build", *BUILD])
    figures["duckdb_full"] = {"seconds": round(wall, 1), "peak_rss_mb": round(rss)}
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
        figures["appended_answers"] = append_model(db, scale)
        wall, rss = child(db, [*HINDSIGHT, "build", *BUILD])
        figures["duckdb_append"] = {"seconds": round(wall, 1), "peak_rss_mb": round(rss)}
        for engine in engines:
            figures[f"spark_{engine}_append"] = timed_spark_build(db, spark_env[engine])
    finally:
        if cluster is not None:
            cluster.__exit__(None, None, None)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, action="append", help="S x the paper's cases (repeatable; default 1 and 10)")
    parser.add_argument("--engines", default="local,standalone", help="local, standalone or both (comma-separated)")
    args = parser.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    folder = Path(tempfile.mkdtemp(prefix="hindsight-spark-"))
    results = [one_scale(scale, engines, folder) for scale in (args.scale or [1, 10])]
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "spark.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
