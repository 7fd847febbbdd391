"""The report's missing-pairs counts at 100x the paper's cases, with requests.

bench_refresh's generated questions have no cases, hence no requests, and the missing-pairs counts
then match nothing. This script copies a warehouse bench_refresh built (its folder's
warehouse.duckdb), gives it a request for every question in every condition, visibility and prompt
the generated answers cover (4.4 M rows of fct_answer_requests, written straight into the table),
and times, on the same copy:

- the reference: the check computed at report time, as the report did before agg_pair_coverage
  (its SQL is kept here), which also cross-checks the mart's rows;
- agg_pair_coverage built from scratch (dbt's timing of the node);
- the same after appending one paper-scale model's answers and building what scores them: the
  incremental build counts only the new model's groups.

    .venv/bin/python bench/bench_pair_coverage.py /tmp/hindsight-refresh-XXXX/warehouse.duckdb
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
from bench_metrics import child, model_timings
from bench_refresh import append_model

PROJECT = Path(__file__).resolve().parents[1]
DBT = str(Path(sys.executable).parent / "dbt")

REQUESTS = """
    insert into main.fct_answer_requests (request_id, tts_json, question_json, sampling_profile, cohort, question_id,
                                          condition, visibility, prompt_variant)
    select md5(questions.question_id || cells.condition || cells.visibility || variants.prompt_variant), '[]', '{}',
           'bench', questions.cohort, questions.question_id, cells.condition, cells.visibility, variants.prompt_variant
    from main.dim_questions as questions,
        (values ('0', 'full'), ('1.1', 'full'), ('1.1', 'masked'), ('1.2', 'full'), ('1.2', 'masked'), ('2.1', 'full'),
                ('2.1', 'masked'), ('2.2', 'full'), ('2.2', 'masked'), ('3.1', 'full'), ('3.1', 'masked'), ('3.2', 'full'),
                ('3.2', 'masked')) as cells(condition, visibility),
        (values ('standard'), ('warning')) as variants(prompt_variant)"""

# the check as the report computed it before the build kept its counts (analyses/report_missing_pairs.sql
# until 12-02), with n_paired from the pairs, as agg_pair_coverage counts it
REPORT_TIME_CHECK = """
    with requests as (
        select distinct cohort, question_id, condition, prompt_variant from main.fct_answer_requests where condition <> '0'
    ),
    requested as (select cohort, condition, prompt_variant, count(*) as n_requested from requests group by all),
    answering as (select distinct cohort, model, prompt_variant from main.agg_answer_provenance),
    pairs as (select distinct question_id, model, condition, prompt_variant from intermediate.int_answer_pairs),
    answered as (
        select question_id, model, condition, prompt_variant,
            bool_or(visibility = 'full') as has_full, bool_or(visibility = 'masked') as has_masked
        from intermediate.int_answers_scored
        where is_latest_in_cell and condition <> '0'
        group by all
    ),
    answered_requests as (
        select requests.cohort, answered.model, requests.prompt_variant, requests.condition,
            count(pairs.question_id) as n_paired,
            count(*) filter (where answered.has_full) as n_full,
            count(*) filter (where answered.has_masked) as n_masked
        from answered
        inner join requests using (question_id, condition, prompt_variant)
        left join pairs using (question_id, model, condition, prompt_variant)
        group by all
    )
    select requested.cohort, answering.model, requested.prompt_variant, requested.condition,
        requested.n_requested, coalesce(answered_requests.n_paired, 0),
        requested.n_requested - coalesce(answered_requests.n_full, 0),
        requested.n_requested - coalesce(answered_requests.n_masked, 0)
    from requested
    inner join answering using (cohort, prompt_variant)
    left join answered_requests using (cohort, model, prompt_variant, condition)
    order by all"""

MART = """
    select cohort, model, prompt_variant, condition, n_expected, n_paired, n_missing_full, n_missing_masked
    from main.agg_pair_coverage where n_expected > 0 order by all"""


def check(db: Path) -> dict[str, object]:
    """Seconds of the report-time check and of reading the mart, and whether their rows agree."""
    with duckdb.connect(str(db), read_only=True) as con:
        started = time.perf_counter()
        reference = con.execute(REPORT_TIME_CHECK).fetchall()
        middle = time.perf_counter()
        mart = con.execute(MART).fetchall()
        done = time.perf_counter()
    return {"report_time_check_seconds": round(middle - started, 2), "mart_read_seconds": round(done - middle, 3),
            "rows": len(mart), "rows_agree": reference == mart}


def dbt_run(db: Path, *args: str) -> float:
    child(db, [DBT, "run", *args, "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT)])
    return round(model_timings()["agg_pair_coverage"], 2) if "agg_pair_coverage" in args else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("warehouse", type=Path, help="a warehouse bench_refresh.py built (it is copied, not changed)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="hindsight-pairs-"))
    db = folder / "warehouse.duckdb"
    shutil.copy(args.warehouse, db)
    os.environ["HINDSIGHT_DB"] = str(db)
    with duckdb.connect(str(db)) as con:
        con.execute(REQUESTS)
        figures: dict[str, object] = {"requests": con.execute("select count(*) from main.fct_answer_requests").fetchone()[0]}
    figures["from_scratch_seconds"] = [dbt_run(db, "--select", "agg_pair_coverage", "--full-refresh") for _ in range(2)]
    figures["before_append"] = check(db)
    figures["appended_answers"] = append_model(db, 100)
    dbt_run(db, "--select", "int_answers_scored", "int_answer_pairs", "agg_answer_provenance")
    figures["incremental_after_append_seconds"] = dbt_run(db, "--select", "agg_pair_coverage")
    figures["after_append"] = check(db)
    shutil.rmtree(folder)
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "pair_coverage_scale100.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
