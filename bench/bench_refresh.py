"""Refresh at scale: the whole `hindsight build` (all models and tests) on a warehouse of S x the
paper's cases (bench_metrics.generate: 4 models x 13 cells x 2 prompt variants x 10 questions per
case) and its peak memory; `hindsight report` into a new folder; appending one paper-scale model's
answers (171 cases x 10 questions x 13 cells x 2 variants = 44,460 at any S) and building again (its
slowest nodes, and what the metric models cost in it); the report again into the same folder (it
draws what the new model changed and copies the other figures); the metric models rebuilt from
scratch against the practical limit (a DuckDB per-case aggregate plus a numpy matrix product on the
same draws, timed in the same run); and the floor under a full build: what writing the rows it keeps
costs by itself (write_floor).

    .venv/bin/python bench/bench_refresh.py --scale 100
    .venv/bin/python bench/bench_refresh.py --scale 1
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
from bench_metrics import EVAL_TARGET_MODELS, METRIC_MODELS, REPLAYED_PAYLOAD, child, generate, model_timings, write_results
from bench_rebuild import run_results

from ingest.db import connect
from ingest.serve import snapshots
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
                md5(question_id || 'appended-{load}' || condition || visibility || prompt_variant), question_id, model,
                condition, visibility, prompt_variant, answer, null, {REPLAYED_PAYLOAD}, now()
            from (
                select question_id, 'bench:appended-model-{load}' as model, condition, visibility, v as prompt_variant,
                    case format when 'true/false' then 'true' when 'free response' then 'text'
                        else chr(65 + cast(floor(random() * 4) as integer)) end as answer
                from questions, cells, (values ('standard'), ('warning')) vv(v)
            )""")
        return con.execute("select count(*) from raw.responses where load_id = ?", [load]).fetchone()[0]


def reference_seconds(db: Path, replicates: int = 2000) -> dict[str, float]:
    """The practical limit of the metric models: per (case, cell) sums in one DuckDB aggregate over what
    the metric models read (the narrow scored answers and the pairs, the cases' numbering), the cells
    numbered on their few distinct keys, then per cohort the replicate sums as one matrix product with
    the same case weights, and percentiles. Returns the seconds of the aggregate and in all.

    (Until 12-01 this read the fct_answers view and numbered cases and cells by two dense_rank
    windows over the 20 M sums: 57 s on a day this version takes 17 s, most of it the windows.)"""
    started = time.perf_counter()
    with duckdb.connect(str(db), read_only=True) as con:
        # cohorts as numbers (20 M strings to compare in numpy cost more than the matrix product),
        # numbered once for the aggregate and for reading its rows back
        con.execute("""
            create temp table cases as
            select cohort, case_id, cast(case_index as integer) as case_index,
                   cast(dense_rank() over (order by cohort) as integer) as cohort_index
            from intermediate.int_bootstrap_cases""")
        cohorts = dict(con.execute("select distinct cohort_index, cohort from cases").fetchall())
        sums = con.execute("""
            with questions as (
                select questions.question_id, cases.cohort_index, cases.case_index, questions.format,
                       coalesce(questions.options_type, '') as options_type
                from intermediate.int_questions_positioned as questions
                inner join cases on cases.cohort = questions.cohort and cases.case_id = questions.case_id
            ),
            values_ as (
                select questions.cohort_index, questions.case_index,
                       hash(model, condition, prompt_variant, visibility, questions.format, questions.options_type) as cell,
                       unnest([acc, htr]) as value, unnest([1, 2]) as metric
                from intermediate.int_answers_scored as answers
                inner join questions on questions.question_id = answers.question_id
                where is_latest_in_cell
                union all
                select cases.cohort_index, cases.case_index, hash(model, condition, prompt_variant, format, coalesce(options_type, '')),
                       unnest([delta_acc, delta_htr, air, hbr]), unnest([3, 4, 5, 6])
                from intermediate.int_answer_pairs as pairs
                inner join cases on cases.cohort = pairs.cohort and cases.case_id = pairs.case_id
            ),
            sums as (
                select cohort_index, case_index, cell, metric, sum(value) as value_sum, count(value) as n
                from values_ where value is not null
                group by all
            ),
            cells as (
                -- numbered on the few distinct cells, not by a window over every sum
                select cohort_index, cell, metric,
                       cast(row_number() over (partition by cohort_index order by cell, metric) - 1 as integer) as cell_index
                from (select distinct cohort_index, cell, metric from sums)
            )
            select sums.cohort_index, sums.case_index, cells.cell_index, sums.value_sum, sums.n
            from sums inner join cells using (cohort_index, cell, metric)""").fetchnumpy()
    aggregate = time.perf_counter() - started
    for code, cohort in cohorts.items():
        rows = sums["cohort_index"] == code
        n_cases, n_cells = sums["case_index"][rows].max() + 1, sums["cell_index"][rows].max() + 1
        s, n = np.zeros((n_cases, n_cells)), np.zeros((n_cases, n_cells))
        s[sums["case_index"][rows], sums["cell_index"][rows]] = sums["value_sum"][rows]
        n[sums["case_index"][rows], sums["cell_index"][rows]] = sums["n"][rows]
        # the draws as the metric models get them: read back from beside the warehouse once drawn
        w = bootstrap.shared_weights(2026, str(cohort), int(n_cases), replicates, bootstrap.weights_cache(str(db)))
        with np.errstate(invalid="ignore", divide="ignore"):
            np.nanpercentile((w @ s) / (w @ n), [2.5, 97.5], axis=0)
    return {"aggregate": aggregate, "total": time.perf_counter() - started}


# the tables a full build stores that grow with the answers, and the marts a snapshot holds that do
STORED = ["int_response_provenance", "int_answers_scored", "int_answer_pairs", "int_answer_texts_normalised", "int_metric_case_sums"]
PUBLISHED = ["fct_answers", "fct_answer_pairs", "fct_answer_texts", "fct_judgment_requests", "fct_bootstrap_samples",
             "fct_metric_parts"]


def write_floor(db: Path, folder: Path) -> dict[str, float]:
    """What writing the rows a full build keeps costs by itself: each table it stores (DuckDB's storage)
    and each mart a snapshot holds (Parquet, zstd, as the publish writes them), from rows already
    computed and held in memory, a model at a time where the rows have one (as the publish does).
    No SQL that computes them can make a full build cheaper than this."""
    scratch = folder / "floor"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    seconds: dict[str, float] = {}
    with duckdb.connect(config={"memory_limit": "3GB", "preserve_insertion_order": False,
                                "temp_directory": str(scratch / "spill")}) as con:
        # the warehouse under its own name (its views name it), the tables written to a scratch file
        con.execute(f"attach '{db}' as {db.stem} (read_only)")
        con.execute(f"use {db.stem}")
        con.execute(f"attach '{scratch / 'stored.duckdb'}' as stored")
        relations = {name: con.execute("select table_schema from information_schema.tables where table_name = ?",
                                       [name]).fetchone()[0] + "." + name for name in STORED + PUBLISHED}
        for name, relation in relations.items():
            columns = [row[0] for row in con.execute(f"describe {relation}").fetchall()]
            parts = ([row[0] for row in con.execute(f"select distinct model from {relation}").fetchall()]
                     if "model" in columns else [None])
            spent = 0.0
            for i, model in enumerate(parts):
                con.execute(f"create or replace temp table part as select * from {relation}"
                            + ("" if model is None else " where model = ?"), [] if model is None else [model])
                started = time.perf_counter()
                if name in STORED:
                    con.execute(f"create table if not exists stored.{name} as select * from part limit 0")
                    con.execute(f"insert into stored.{name} select * from part")
                    con.execute("checkpoint stored")
                else:
                    con.execute(f"copy part to '{scratch / f'{name}-{i}.parquet'}' (format parquet, compression zstd)")
                spent += time.perf_counter() - started
            seconds[name] = round(spent, 2)
    shutil.rmtree(scratch, ignore_errors=True)
    return {"stored_s": round(sum(seconds[n] for n in STORED), 1), "published_s": round(sum(seconds[n] for n in PUBLISHED), 1),
            "per_relation_s": seconds}


def inside_dbt(db: Path) -> dict:
    """The last build's time inside dbt, by node kind, and the snapshot publish (the on-run-end hook):
    its slowest marts, and of the answer-level facts published a file per model, how many written."""
    results = run_results(PROJECT / "target")
    results["publish_s"] = model_timings().get("hindsight-on-run-end-0")
    now = snapshots.current(db)
    marts = now.manifest["marts"] if now else {}
    results["publish_slowest_marts"] = {mart: entry["publish_seconds"] for mart, entry in
                                        sorted(marts.items(), key=lambda item: -item[1].get("publish_seconds", 0))[:6]}
    results["partitions_written"] = {mart: f"{sum(part['written'] for part in entry['partitions'])} of {len(entry['partitions'])}"
                                     for mart, entry in marts.items() if entry.get("partition_by")}
    return results


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
        figures["full_build_dbt"] = inside_dbt(db)
    # a report into a new folder draws every figure
    shutil.rmtree(folder / "report", ignore_errors=True)
    wall, rss = child(db, [*HINDSIGHT, "report", "--out", str(folder / "report")])
    figures["report_seconds"], figures["report_peak_rss_mb"] = round(wall, 1), round(rss)
    figures["appended_answers"] = append_model(db, args.scale)
    wall, rss = child(db, [*HINDSIGHT, "build", *BUILD])
    figures["append_build_seconds"], figures["append_build_peak_rss_mb"] = round(wall, 1), round(rss)
    figures["append_build_dbt"] = inside_dbt(db)
    timing = model_timings()
    figures["append_build_slowest_nodes"] = {name: round(seconds, 2) for name, seconds in
                                             sorted(timing.items(), key=lambda item: -item[1])[:10]}
    figures["append_metric_models_seconds"] = round(sum(timing[m] for m in METRIC_MODELS + EVAL_TARGET_MODELS), 2)
    # the report of the appended warehouse into the same folder: it draws what the new model changed
    # (its own figures, the cross-model and breakdown ones) and copies the rest
    figures["report_after_append_seconds"] = round(child(db, [*HINDSIGHT, "report", "--out", str(folder / "report")])[0], 1)
    # the metric models from scratch (they are incremental: a plain run would only estimate what changed)
    # a plain dbt, in a target folder of its own: its run_results are read below, apart from the build's
    plain = folder / "dbt-target"
    wall, _ = child(db, [DBT, "run", "--full-refresh", "--select", *METRIC_MODELS, *EVAL_TARGET_MODELS,
                         "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT)], {"DBT_TARGET_PATH": str(plain)})
    timing = model_timings(plain)
    figures["metric_models_seconds"] = round(sum(timing[m] for m in METRIC_MODELS + EVAL_TARGET_MODELS), 2)
    figures["metric_models_per_model"] = {m: round(timing[m], 2) for m in METRIC_MODELS + EVAL_TARGET_MODELS}
    reference = reference_seconds(db)
    figures["reference_seconds"] = round(reference["total"], 2)
    figures["reference_aggregate_seconds"] = round(reference["aggregate"], 2)
    figures["metric_models_vs_reference"] = round(figures["metric_models_seconds"] / figures["reference_seconds"], 2)
    figures["write_floor"] = write_floor(db, folder)
    write_results(f"refresh_scale{args.scale}.json", figures)


if __name__ == "__main__":
    main()
