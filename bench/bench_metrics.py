"""Benchmark of the metric models at paper scale and at 100x the cases.

Paper scale: cohorts of 40 and 131 cases, 10 questions each (2/3/5 split,
true/false, ordinal and categorical multiple choice, free response), 4
models, 7 conditions (paired ones full and masked), 2 prompt variants,
B = 2,000. Answers are generated in SQL straight into raw.responses, the
warehouse is built once, then the four models that turn fct_answers and
fct_answer_pairs into agg_metrics and agg_metrics_by_format are rebuilt and
timed with dbt's own timing (target/run_results.json), and the two that add
the eval-target slice (run after them, in the same dbt process) apart; peak
memory is the dbt process's maximum RSS. Then `hindsight report` is timed on
the same warehouse (4 models x 2 prompts x 2 cohorts: every figure). At paper scale the script also times a plain
pandas loop over replicates and the pure-SQL cross-check, for comparison.

    .venv/bin/python bench/bench_metrics.py --scale 1
    .venv/bin/python bench/bench_metrics.py --scale 100
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import pandas as pd

from ingest.db import connect
from ingest.stats import bootstrap

PROJECT = Path(__file__).resolve().parents[1]

METRIC_MODELS = ["int_metric_case_sums", "int_metric_estimates", "agg_metrics", "agg_metrics_by_format"]
EVAL_TARGET_MODELS = ["int_metric_estimates_by_eval_target", "agg_metrics_by_eval_target"]   # timed apart
DBT = str(Path(sys.executable).parent / "dbt")


# an answer's payload as `hindsight load responses` stores it (the file's line: ingest/load/responses.py),
# over columns question_id, model, condition, visibility, prompt_variant and answer: what the build's
# JSON parsing meets on replayed answers (an empty payload hid 18 s of it at 100x)
REPLAYED_PAYLOAD = ("json_object('question_id', question_id, 'model', model, 'condition', condition, 'visibility', visibility, "
                    "'prompt_variant', prompt_variant, 'answer', answer, 'evidence', null)")


def generate(db: Path, scale: int) -> dict:
    with connect(db) as con:
        con.execute("select setseed(0.42)")
        con.execute(f"""
            create temp table cohorts as select * from (values ('sepsis', 40 * {scale}), ('glp1', 131 * {scale})) t(cohort, n);
            create temp table questions as
            select cohort, 'case' || lpad(cast(c as varchar), 6, '0') as case_id, q,
                   cohort || '-' || c || '-' || q as question_id,
                   case when q in (0, 4, 7) then 'true/false' when q in (1, 5, 9) then 'ordinal'
                        when q in (2, 6) then 'categorical' else 'free response' end as kind,
                   case when q < 2 then 'accuracy' when q < 5 then 'hindsight_bias' else 'both' end as eval_target
            from cohorts, range(n) r(c), range(10) s(q);
            insert into raw.questions
            select 1, 'bench', row_number() over (), question_id, cohort, case_id, md5(question_id),
                json_object('question', 'Q?', 'case_id', case_id, 'cohort', cohort, 'eval_target', eval_target,
                    'format', case when kind in ('ordinal', 'categorical') then 'multiple choice' else kind end,
                    'options', case when kind in ('ordinal', 'categorical')
                        then json_array('A. one', 'B. two', 'C. three', 'D. four') end,
                    'options_type', case when kind in ('ordinal', 'categorical') then kind end,
                    'early_cutoff', json_object('event', 'e', 'time', '0'),
                    'correct_answer', case kind when 'true/false' then 'true' when 'free response' then 'ref'
                        else 'A. one' end,
                    'hindsight_trap', case when eval_target = 'accuracy' then null
                        when kind = 'true/false' then 'false' when kind = 'free response' then 'trap' else 'D. four' end),
                now()
            from questions;
            create temp table cells as
            select * from (values ('0', 'full'), ('1.1', 'full'), ('1.1', 'masked'), ('1.2', 'full'), ('1.2', 'masked'),
                ('2.1', 'full'), ('2.1', 'masked'), ('2.2', 'full'), ('2.2', 'masked'), ('3.1', 'full'), ('3.1', 'masked'),
                ('3.2', 'full'), ('3.2', 'masked')) t(condition, visibility);
            insert into raw.responses
            select 1, 'bench', row_number() over (), md5(question_id || model || condition || visibility || prompt_variant),
                question_id, model, condition, visibility, prompt_variant, answer, null, {REPLAYED_PAYLOAD}, now()
            from (
                select question_id, 'bench:model-' || m as model, condition, visibility, v as prompt_variant,
                    case kind when 'true/false' then (case when random() < 0.8 then 'true' else 'false' end)
                              when 'free response' then 'text'
                              else (case when random() < 0.05 then 'no idea' else chr(65 + cast(floor(random() * 4) as integer)) end)
                    end as answer
                from questions, range(4) mm(m), cells, (values ('standard'), ('warning')) vv(v)
            );
        """)
        return dict(zip(["questions", "responses"], con.execute(
            "select (select count(*) from raw.questions), (select count(*) from raw.responses)").fetchone()))


def dbt(db: Path, *args: str) -> tuple[float, float]:
    """Run dbt in a child; return (wall seconds, peak RSS in MB of that child)."""
    return child(db, [DBT, *args, "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT)])


def child(db: Path, command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run a command in a child (ENV added to its environment); return (wall seconds, peak RSS in MB of that child)."""
    probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", probe, *command], cwd=PROJECT, capture_output=True, text=True,
                          env={**os.environ, "HINDSIGHT_DB": str(db), **(env or {})})
    if done.returncode != 0:
        sys.exit(done.stdout[-4000:])
    return time.perf_counter() - started, int(done.stderr.strip().splitlines()[-1]) / 1024


def model_timings(target: Path = PROJECT / "target") -> dict[str, float]:
    results = json.loads((target / "run_results.json").read_text())["results"]
    # models by name, data tests as name.hash, unit tests as model.test
    return {r["unique_id"].split(".", 2)[2]: r["execution_time"] for r in results}


QUESTION_VALUES = """
    select cohort, case_id, model, condition, prompt_variant, metric, visibility, format, options_type, value
    from (
        select *, unnest(['acc', 'htr']) as metric, unnest([acc, htr]) as value from fct_answers where is_latest_in_cell
    ) where value is not null
    union all
    select cohort, case_id, model, condition, prompt_variant, metric, 'paired', format, options_type, value
    from (
        select *, unnest(['delta_acc', 'delta_htr', 'air', 'hbr']) as metric,
               unnest([delta_acc, delta_htr, air, hbr]) as value from fct_answer_pairs
    ) where value is not null
"""


def pandas_loop(db: Path, replicates: int) -> float:
    """The straightforward way: per replicate, weight every question-level value
    by its case's multiplicity and group by cell in pandas."""
    with duckdb.connect(str(db), read_only=True) as con:
        values = con.execute(QUESTION_VALUES).df()
        cases = con.execute("select cohort, case_id, case_index, n_cases from intermediate.int_bootstrap_cases").df()
    cell = ["model", "condition", "prompt_variant", "metric", "visibility"]
    started = time.perf_counter()
    values = values.merge(cases, on=["cohort", "case_id"])
    for cohort, part in values.groupby("cohort"):
        w = bootstrap.weights(2026, cohort, int(part["n_cases"].iloc[0]), replicates)
        estimates = []
        for r in range(replicates):
            weight = w[r][part["case_index"].to_numpy()]
            frame = part.assign(s=part["value"] * weight, n=weight)
            grouped = frame.groupby(cell)[["s", "n"]].sum()
            estimates.append(grouped["s"] / grouped["n"])
        pd.concat(estimates, axis=1).quantile([0.025, 0.975], axis=1)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=1, help="multiply the paper's case counts (1 = 40 + 131 cases)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    db = Path(tempfile.mkdtemp(prefix="hindsight-metrics-")) / "warehouse.duckdb"
    figures: dict[str, object] = {"scale": args.scale, "cases": 171 * args.scale}
    started = time.perf_counter()
    figures.update(generate(db, args.scale))
    figures["generate_seconds"] = round(time.perf_counter() - started, 1)
    dbt(db, "seed")
    wall, rss = dbt(db, "run")
    figures["first_full_dbt_run_seconds"] = round(wall, 1)
    runs = []
    for _ in range(args.repeats):
        # from scratch: the metric models are incremental, a plain run would only estimate what changed
        wall, rss = dbt(db, "run", "--full-refresh", "--select", *METRIC_MODELS, *EVAL_TARGET_MODELS)
        timing = model_timings()
        runs.append((sum(timing[m] for m in METRIC_MODELS), timing, rss, wall))
    best = min(runs, key=lambda r: r[0])
    figures["metric_models_seconds_dbt_timing"] = round(best[0], 2)
    figures["per_model_seconds"] = {m: round(best[1][m], 2) for m in METRIC_MODELS + EVAL_TARGET_MODELS}
    figures["eval_target_models_seconds_dbt_timing"] = round(sum(best[1][m] for m in EVAL_TARGET_MODELS), 2)
    figures["metric_models_peak_rss_mb"] = round(max(r[2] for r in runs))
    figures["metric_models_wall_seconds_incl_dbt_startup"] = round(best[3], 1)
    with duckdb.connect(str(db), read_only=True) as con:
        figures["agg_metrics_rows"] = con.execute("select count(*) from agg_metrics").fetchone()[0]
        figures["agg_metrics_by_format_rows"] = con.execute("select count(*) from agg_metrics_by_format").fetchone()[0]
    wall, rss = child(db, [sys.executable, "-m", "ingest.cli", "report", "--out", str(db.parent / "report")])
    figures["report_seconds"], figures["report_peak_rss_mb"] = round(wall, 1), round(rss)
    figures["report_figures"] = len(list((db.parent / "report" / "figures").glob("*.svg")))
    if args.scale == 1:
        figures["pandas_loop_seconds"] = round(pandas_loop(db, 2000), 1)
        estimates = best[0]
        figures["speedup_vs_pandas_loop"] = round(figures["pandas_loop_seconds"] / estimates, 1)
        wall, _ = dbt(db, "test", "--select", "assert_bootstrap_cis_match_pure_sql",
                      "--vars", '{"bootstrap_sql_check_max_cases": 100000}')
        figures["pure_sql_cross_check_seconds"] = round(model_timings()["assert_bootstrap_cis_match_pure_sql"], 1)
    write_results(f"metrics_scale{args.scale}.json", figures)


def write_results(name: str, figures: dict) -> None:
    """FIGURES into bench/results/NAME (not committed), and on standard output."""
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
