"""Benchmark of slicing the metrics: `hindsight metrics` for a three-dimension slice of two metrics
(intervals included), and `mf query` for the same slice (estimates only), on the demo warehouse or on
a generated one at N times the paper's cases (bench_metrics.generate: 4 models, 13 answer cells,
2 prompt variants; at 100x 17.8 M answers and 26 M rows of fct_metric_parts).

The warehouse is built and published once with `hindsight build`; each command then runs in a child
process, best of --repeats, with its peak RSS. `hindsight metrics` reads the published snapshot,
`mf query` the warehouse.

    .venv/bin/python bench/bench_slices.py --demo
    .venv/bin/python bench/bench_slices.py --scale 100
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from bench_metrics import child, generate, write_results
from bench_refresh import BUILD

METRICS = "delta_htr,acc"
BY = ["model", "condition", "question__format"]


def best(db: Path, command: list[str], repeats: int) -> tuple[float, float]:
    runs = [child(db, command) for _ in range(repeats)]
    return round(min(r[0] for r in runs), 2), round(max(r[1] for r in runs))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=1, help="multiply the paper's case counts (1 = 40 + 131 cases)")
    parser.add_argument("--demo", action="store_true", help="the embedded demo instead of a generated warehouse")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reuse", type=Path, help="a warehouse this script built before: time the slices only")
    args = parser.parse_args()
    db = args.reuse or Path(tempfile.mkdtemp(prefix="hindsight-slices-")) / "warehouse.duckdb"
    figures: dict[str, object] = {"warehouse": "demo" if args.demo else f"generated, scale {args.scale}",
                                  "slice": f"--metric {METRICS} --by {','.join(BY)}", "cpus": os.cpu_count()}
    started = time.perf_counter()
    if args.reuse:
        pass
    elif args.demo:
        child(db, [sys.executable, "-m", "ingest.cli", "demo", "--report-dir", str(db.parent / "reports")])
    else:
        figures.update(generate(db, args.scale))
        child(db, [sys.executable, "-m", "ingest.cli", "build", *BUILD])     # the generator loads no case files
    figures["build_seconds"] = None if args.reuse else round(time.perf_counter() - started, 1)
    out = db.parent / "slice.csv"
    figures["hindsight_metrics_seconds"], figures["hindsight_metrics_peak_rss_mb"] = best(
        db, [sys.executable, "-m", "ingest.cli", "metrics", "--metric", METRICS, "--by", ",".join(BY), "--format", "csv",
             "--out", str(out)], args.repeats)
    figures["cells"] = sum(1 for _ in out.open()) - 1
    mf = str(Path(sys.executable).parent / "mf")
    group_by = ",".join([*BY, "answer__prompt_variant", "answer__visibility"])
    figures["mf_query_seconds"], figures["mf_query_peak_rss_mb"] = best(
        db, [mf, "query", "--metrics", METRICS, "--group-by", group_by, "--csv", str(db.parent / "mf.csv")], args.repeats)
    write_results(f"slices_{'demo' if args.demo else f'scale{args.scale}'}.json", figures)


if __name__ == "__main__":
    main()
