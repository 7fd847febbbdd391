"""What a refresh costs inside dbt (dbt's own target/run_results.json), three ways:

1. The embedded demo: `hindsight demo`, then `hindsight build --all` again; node seconds per kind
   (models, data tests, seeds, hooks; a refresh runs no unit test), the slowest nodes and dbt's
   elapsed time.
2. The HindsightBench reply parser: replies a second over the demo's 54,404 replies, every parser
   version (the step int_hb_reply_parses runs), best of three.
3. A HindsightBench append: the shared release loaded without one model and built, then that model
   loaded and built again; at 1x (the release's models) and 5x (their copies under new keys, as a
   second serving run would be). The append's dbt time should not grow with the models already
   audited.

    .venv/bin/python bench/bench_rebuild.py
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import duckdb
from bench_metrics import child, write_results
from bench_robustness import RELEASE, release_with

from ingest.stats.hb_steps import hb_reply_parses

KINDS = {"model": "models", "test": "data tests", "unit_test": "unit tests", "seed": "seeds", "operation": "hooks"}


def run_results(target: Path) -> dict:
    results = json.loads((target / "run_results.json").read_text())
    per_kind = defaultdict(lambda: [0, 0.0])
    for r in results["results"]:
        kind = KINDS.get(r["unique_id"].split(".")[0], r["unique_id"].split(".")[0])
        per_kind[kind][0] += 1
        per_kind[kind][1] += r["execution_time"]
    slowest = sorted(results["results"], key=lambda r: -r["execution_time"])[:8]
    return {"dbt_elapsed_s": round(results["elapsed_time"], 1),
            "per_kind": {k: {"nodes": n, "node_s": round(s, 1)} for k, (n, s) in sorted(per_kind.items())},
            "slowest": {r["unique_id"].split(".")[-1]: round(r["execution_time"], 2) for r in slowest}}


def build(db: Path, *args: str) -> dict:
    target = db.parent / "target"
    wall, rss = child(db, [sys.executable, "-m", "ingest.cli", "build", *args],
                      {"DBT_TARGET_PATH": str(target), "DBT_LOG_PATH": str(db.parent / "logs")})
    return {"wall_s": round(wall, 1), "peak_rss_mb": round(rss), **run_results(target)}


def demo(folder: Path) -> tuple[dict, Path]:
    db = folder / "demo" / "warehouse.duckdb"
    db.parent.mkdir()
    child(db, [sys.executable, "-m", "ingest.cli", "demo", "--report-dir", str(folder / "demo" / "report")],
          {"DBT_TARGET_PATH": str(db.parent / "target")})
    return build(db, "--all"), db


def parser_speed(db: Path) -> dict:
    with duckdb.connect(str(db), read_only=True) as con:
        replies = con.execute("select * from staging.stg_raw__hb_responses").df()
    best = min(_timed(lambda: hb_reply_parses({"replies": replies}, {})) for _ in range(3))
    return {"replies": len(replies), "seconds": round(best, 2), "replies_per_second": round(len(replies) / best)}


def _timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def hindsightbench_append(folder: Path, copies_per_model: int) -> dict:
    """The release (and copies_per_model - 1 copies of each of its models) without its first model,
    built; then that model loaded and built again."""
    shared = sorted(p.name for p in (RELEASE / "hindsight" / "outputs" / "bench").iterdir() if p.is_dir())
    db = folder / f"hb{copies_per_model}x" / "warehouse.duckdb"
    db.parent.mkdir()
    first = {name: name for name in shared[1:]}
    first |= {f"{name}-copy{i}": name for name in shared for i in range(1, copies_per_model)}
    child(db, [sys.executable, "-m", "ingest.cli", "load", "hindsightbench", str(release_with(db.parent / "a", first))])
    full = build(db)
    child(db, [sys.executable, "-m", "ingest.cli", "load", "hindsightbench",
               str(release_with(db.parent / "b", {shared[0]: shared[0]}))])
    return {"models_before": len(first), "full": full, "append": build(db)}


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="hindsight-rebuild-"))
    figures = {}
    figures["demo_rebuild"], db = demo(folder)
    figures["reply_parser"] = parser_speed(db)
    if RELEASE.exists():
        for copies in (1, 5):
            figures[f"hindsightbench_append_{copies}x"] = hindsightbench_append(folder, copies)
    else:
        print(f"{RELEASE} is missing: the HindsightBench append is not measured", file=sys.stderr)
    write_results("rebuild.json", figures)


if __name__ == "__main__":
    main()
