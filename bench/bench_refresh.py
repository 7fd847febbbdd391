"""Refresh at scale: the whole `hindsight build` (all models and tests) on a warehouse of S x the
paper's cases (bench_metrics.generate: 4 models x 13 cells x 2 prompt variants x 10 questions per
case) and its peak memory; `hindsight report` into a new folder; appending one paper-scale model's
answers (171 cases x 10 questions x 13 cells x 2 variants = 44,460 at any S) and building again (its
slowest nodes, and what the metric models cost in it); the report again into the same folder (it
draws what the new model changed and copies the other figures); the metric models rebuilt from
scratch against the practical limit (a DuckDB per-case aggregate plus a numpy matrix product on the
same draws, timed in the same run).

    .venv/bin/python bench/bench_refresh.py --scale 100
    .venv/bin/python bench/bench_refresh.py --scale 1
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
from bench_metrics import EVAL_TARGET_MODELS, METRIC_MODELS, child, generate, model_timings

from ingest.db import connect
from ingest.stats import bootstrap

PROJECT = Path(__file__).resolve().parents[1]
HINDSIGHT = [sys.executable, "-m", "ingest.cli"]
DBT = str(Path(sys.executable).parent / "dbt")
# the generated questions have no case narratives or TTS: the one test that needs dim_cases is left out
BUILD = ["--exclude", "relationships_dim_questions_case_id__case_id__ref_dim_cases_"]


def append_model(db: Path, scale: int) -> int:
    """One more model's answers on the first 171 cases' questions (a paper-scale model), as one new load."""
    with connect(db) as con:
        con.execute("select setseed(0.7)")
        # a new model each time (--reuse appends again to the same warehouse)
        load = con.execute("select coalesce(max(load_id), 0) + 1 from raw.responses").fetchone()[0]
        con.execute(f"""
            insert into raw.responses
            with questions as (
                select question_id, json_extract_string(payload, '$.format') as format
                from raw.questions
                where cast(regexp_extract(case_id, '(\\d+)$', 1) as integer) < case when cohort = 'sepsis' then 40 else 131 end
            ),
            cells as (
                select * from (values ('0', 'full'), ('1.1', 'full'), ('1.1', 'masked'), ('1.2', 'full'), ('1.2', 'masked'),
                    ('2.1', 'full'), ('2.1', 'masked'), ('2.2', 'full'), ('2.2', 'masked'), ('3.1', 'full'), ('3.1', 'masked'),
                    ('3.2', 'full'), ('3.2', 'masked')) t(condition, visibility)
            )
            select {load}, 'bench-append', row_number() over (),
                md5(question_id || 'appended-{load}' || condition || visibility || v), question_id, 'bench:appended-model-{load}',
                condition, visibility, v,
                case format when 'true/false' then 'true' when 'free response' then 'text'
                    else chr(65 + cast(floor(random() * 4) as integer)) end,
                null, '{{}}', now()
            from questions, cells, (values ('standard'), ('warning')) vv(v)""")
        return con.execute("select count(*) from raw.responses where load_id = ?", [load]).fetchone()[0]


def reference_seconds(db: Path, replicates: int = 2000) -> float:
    """The practical limit of the metric models: per (case, cell) sums in one DuckDB aggregate, then per
    cohort the replicate sums as one matrix product with the same case weights, and percentiles."""
    started = time.perf_counter()
    with duckdb.connect(str(db), read_only=True) as con:
        sums = con.execute("""
            with values_ as (
                select cohort, case_id, hash(model, condition, prompt_variant, visibility, format, options_type) as cell,
                       unnest([acc, htr]) as value, unnest([1, 2]) as metric
                from fct_answers where is_latest_in_cell
                union all
                select cohort, case_id, hash(model, condition, prompt_variant, format, options_type),
                       unnest([delta_acc, delta_htr, air, hbr]), unnest([3, 4, 5, 6])
                -- the pairs' table, not the view that looks their response ids up (2 s at 100x)
                from intermediate.int_answer_pairs
            )
            select cohort, dense_rank() over (partition by cohort order by case_id) - 1 as case_index,
                   dense_rank() over (partition by cohort order by cell, metric) - 1 as cell_index,
                   sum(value) as value_sum, count(value) as n
            from values_ where value is not null
            group by cohort, case_id, cell, metric""").fetchnumpy()
    for cohort in np.unique(sums["cohort"]):
        rows = sums["cohort"] == cohort
        n_cases, n_cells = sums["case_index"][rows].max() + 1, sums["cell_index"][rows].max() + 1
        s, n = np.zeros((n_cases, n_cells)), np.zeros((n_cases, n_cells))
        s[sums["case_index"][rows], sums["cell_index"][rows]] = sums["value_sum"][rows]
        n[sums["case_index"][rows], sums["cell_index"][rows]] = sums["n"][rows]
        w = bootstrap.weights(2026, str(cohort), int(n_cases), replicates)
        with np.errstate(invalid="ignore", divide="ignore"):
            np.nanpercentile((w @ s) / (w @ n), [2.5, 97.5], axis=0)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--reuse", type=Path, help="a warehouse this script generated and built: time the steps after the full build")
    args = parser.parse_args()
    folder = args.reuse.parent if args.reuse else Path(tempfile.mkdtemp(prefix="hindsight-refresh-"))
    db = folder / "warehouse.duckdb"
    os.environ["HINDSIGHT_DB"] = str(db)
    figures: dict[str, object] = {"scale": args.scale, "cases": 171 * args.scale,
                                  "memory_limit": os.environ.get("HINDSIGHT_MEMORY_LIMIT", "3GB (default)")}
    if not args.reuse:
        figures.update(generate(db, args.scale))
        wall, rss = child(db, [*HINDSIGHT, "build", *BUILD])
        figures["full_build_seconds"], figures["full_build_peak_rss_mb"] = round(wall, 1), round(rss)
    # a report into a new folder draws every figure
    shutil.rmtree(folder / "report", ignore_errors=True)
    wall, rss = child(db, [*HINDSIGHT, "report", "--out", str(folder / "report")])
    figures["report_seconds"], figures["report_peak_rss_mb"] = round(wall, 1), round(rss)
    figures["appended_answers"] = append_model(db, args.scale)
    wall, rss = child(db, [*HINDSIGHT, "build", *BUILD])
    figures["append_build_seconds"], figures["append_build_peak_rss_mb"] = round(wall, 1), round(rss)
    timing = model_timings()
    figures["append_build_slowest_nodes"] = {name: round(seconds, 2) for name, seconds in
                                             sorted(timing.items(), key=lambda item: -item[1])[:10]}
    figures["append_metric_models_seconds"] = round(sum(timing[m] for m in METRIC_MODELS + EVAL_TARGET_MODELS), 2)
    # the report of the appended warehouse into the same folder: it draws what the new model changed
    # (its own figures, the cross-model and breakdown ones) and copies the rest
    figures["report_after_append_seconds"] = round(child(db, [*HINDSIGHT, "report", "--out", str(folder / "report")])[0], 1)
    # the metric models from scratch (they are incremental: a plain run would only estimate what changed)
    wall, _ = child(db, [DBT, "run", "--full-refresh", "--select", *METRIC_MODELS, *EVAL_TARGET_MODELS,
                         "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT)])
    timing = model_timings()
    figures["metric_models_seconds"] = round(sum(timing[m] for m in METRIC_MODELS + EVAL_TARGET_MODELS), 2)
    figures["metric_models_per_model"] = {m: round(timing[m], 2) for m in METRIC_MODELS + EVAL_TARGET_MODELS}
    figures["reference_seconds"] = round(reference_seconds(db), 2)
    figures["metric_models_vs_reference"] = round(figures["metric_models_seconds"] / figures["reference_seconds"], 2)
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"refresh_scale{args.scale}.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
