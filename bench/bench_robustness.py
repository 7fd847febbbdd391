"""The robustness models (issue 33) on a warehouse of N audited models: the shared release's four
loaded, then copies under new keys (symlinked model folders, as a second serving run would be) up
to N, all built at once; then one more model appended and built incrementally. Reports dbt's time
of each robustness model, per model, and the build's peak RSS.

    .venv/bin/python bench/bench_robustness.py --models 20
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from bench_metrics import child, model_timings

PROJECT = Path(__file__).resolve().parents[1]
RELEASE = PROJECT.parent / "shared" / "data" / "hindsightbench"
ROBUSTNESS = ["int_hb_window_perturbation", "int_hb_lap_sensitivity", "int_hb_transcript_audit", "int_hb_serving_stability",
              "agg_hb_window_perturbation", "agg_hb_lap_sensitivity", "agg_hb_transcript_audit", "agg_hb_serving_stability",
              "agg_hb_w_offset_split", "agg_hb_perdate_crosstab", "agg_hb_robustness"]


def release_with(folder: Path, copies: dict[str, str]) -> Path:
    """A release root whose bench holds `copies` (new key -> shared model), symlinked."""
    root = folder / "release"
    bench = root / "hindsight" / "outputs" / "bench"
    bench.mkdir(parents=True, exist_ok=True)
    if not (root / "macrochain").exists():
        (root / "macrochain").symlink_to(RELEASE / "macrochain")
    for key, source in copies.items():
        if not (bench / key).exists():
            os.symlink(RELEASE / "hindsight" / "outputs" / "bench" / source, bench / key)
    return root


def timed_build(db: Path, target: Path) -> tuple[float, float, dict[str, float]]:
    env = {"DBT_TARGET_PATH": str(target), "DBT_LOG_PATH": str(db.parent / "logs")}
    wall, rss = child(db, [sys.executable, "-m", "ingest.cli", "build"], env)
    return wall, rss, model_timings(target)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=20)
    args = parser.parse_args()
    if not RELEASE.exists():
        sys.exit(f"{RELEASE}: the shared release is needed")
    shared = sorted(p.name for p in (RELEASE / "hindsight" / "outputs" / "bench").iterdir() if p.is_dir())
    folder = Path(tempfile.mkdtemp(prefix="hindsight-robustness-"))
    db, target = folder / "warehouse.duckdb", folder / "target"
    copies = {f"{shared[i % len(shared)]}-copy{i // len(shared)}": shared[i % len(shared)]
              for i in range(len(shared), args.models)}
    started = time.perf_counter()
    child(db, [sys.executable, "-m", "ingest.cli", "load", "hindsightbench", str(RELEASE)])
    if copies:
        child(db, [sys.executable, "-m", "ingest.cli", "load", "hindsightbench", str(release_with(folder, copies))])
    print(f"loaded {args.models} models in {time.perf_counter() - started:.1f}s ({folder})")

    wall, rss, timings = timed_build(db, target)
    robust = {name: timings.get(name, 0.0) for name in ROBUSTNESS}
    total = sum(robust.values())
    print(f"full build of {args.models} models: {wall:.1f}s wall, peak RSS {rss:.0f} MB")
    for name, seconds in robust.items():
        print(f"  {name:<30} {seconds:6.2f}s  ({seconds / args.models:.2f}s per model)")
    print(f"  robustness models together     {total:6.2f}s  ({total / args.models:.2f}s per model); "
          f"int_hb_audit_estimates (the rows' own bootstrap) {timings.get('int_hb_audit_estimates', 0.0):.2f}s")

    extra = {"appended-model": shared[0]}
    child(db, [sys.executable, "-m", "ingest.cli", "load", "hindsightbench", str(release_with(folder, extra))])
    wall, rss, timings = timed_build(db, target)
    robust = {name: timings.get(name, 0.0) for name in ROBUSTNESS}
    print(f"append one model and build: {wall:.1f}s wall, peak RSS {rss:.0f} MB; robustness models {sum(robust.values()):.2f}s")
    for name in ROBUSTNESS[:3]:
        print(f"  {name:<30} {robust[name]:6.2f}s")


if __name__ == "__main__":
    main()
