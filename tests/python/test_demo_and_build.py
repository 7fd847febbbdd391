"""`hindsight demo`, `hindsight build` and `hindsight status` end to end."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime

import duckdb
import pytest

from conftest import PROJECT, assert_dbt_passed, cli_env, dbt_results, hindsight, new_warehouse, query, scalar
from ingest.publish.marts import public_marts

pytestmark = pytest.mark.slow

# the dimensions that describe the project itself (seeds, the build) have rows in an empty warehouse
SELF_DESCRIBING = {"dim_build", "dim_conditions", "dim_metrics", "dim_interval_trust"}


def test_demo_builds_every_mart_in_the_default_schema_and_summarises(demo_warehouse):
    db, output, _ = demo_warehouse
    assert "cases (dim_cases):" in output and "agg_relpos" in output and "fct_answer_requests" in output
    with duckdb.connect(str(db), read_only=True) as con:
        for mart in public_marts():
            con.execute(f"select * from {mart} limit 1")  # plain names resolve in schema main
    assert query(db, "select cohort, count(*), sum(n_questions) from dim_cases group by 1 order by 1") == [
        ("glp1", 4, 40), ("sepsis", 4, 40)]
    assert scalar(db, "select count(*) from dim_questions where relpos is null") == 0


def test_demo_requests_hold_the_conditions_with_their_contexts(demo_warehouse):
    db, _, _ = demo_warehouse
    per_condition = dict(query(db, """
        select condition || '/' || visibility, count(*) from fct_answer_requests
        where prompt_variant = 'standard' group by 1"""))
    assert per_condition == {"0/full": 80, **{f"{c}/{v}": 80 for c in ("1.1", "1.2", "2.1", "2.2") for v in ("full", "masked")},
                             # 3.x once per narrative model: the demo's four simulators wrote narratives
                             **{f"{c}/{v}": 320 for c in ("3.1", "3.2") for v in ("full", "masked")}}
    rows = query(db, """
        select r.condition, r.visibility, r.narrative, r.tts_json, r.question_json, q.cutoff_hours
        from fct_answer_requests r inner join dim_questions q using (question_id)""")
    for condition, visibility, narrative, tts_json, question_json, cutoff in rows:
        assert set(json.loads(question_json)) == {"question", "format", "options"}
        events = json.loads(tts_json)
        assert (condition == "0") == (events == [])
        assert (narrative is None) == condition.startswith("2.")
        if visibility == "masked":
            assert all(event["time"] <= cutoff for event in events)
    # masking really removes later events in the demo, not only in principle
    assert scalar(db, """
        select count(*) from fct_answer_requests f inner join fct_answer_requests m
          on f.question_id = m.question_id and f.condition = m.condition and f.prompt_variant = m.prompt_variant
         and f.visibility = 'full' and m.visibility = 'masked'
        where length(m.tts_json) < length(f.tts_json)""") > 400


def test_synthetic_narratives_make_condition_3_answerable(demo_warehouse, tmp_path):
    source, _, _ = demo_warehouse
    db = tmp_path / "copy.duckdb"
    db.write_bytes(source.read_bytes())
    with duckdb.connect(str(db)) as con:
        con.execute("""
            insert into raw.synthetic_narratives
            select narrative_request_id, 'sim:noise@0.1', 'Synthetic narrative of ' || case_id, ?
            from fct_narrative_requests where cohort = 'sepsis'""", [datetime(2026, 1, 1)])
    hindsight(db, "build")
    assert_dbt_passed(db)
    rows = query(db, """
        select condition, visibility, narrative_model, count(*) from fct_answer_requests
        where condition like '3.%' and prompt_variant = 'standard' and narrative_model = 'sim:noise@0.1'
        group by all order by all""")
    # every sepsis question's full and masked scopes have a narrative (no scope is empty in the demo)
    assert rows == [("3.1", "full", "sim:noise@0.1", 40), ("3.1", "masked", "sim:noise@0.1", 40),
                    ("3.2", "full", "sim:noise@0.1", 40), ("3.2", "masked", "sim:noise@0.1", 40)]
    assert scalar(db, """select count(*) from fct_answer_requests where narrative_model = 'sim:noise@0.1'
                         and narrative not like 'Synthetic narrative of %'""") == 0


def test_demo_again_adds_nothing(demo_warehouse, tmp_path):
    source, _, _ = demo_warehouse
    db = tmp_path / "again.duckdb"
    db.write_bytes(source.read_bytes())
    before = [scalar(db, f"select count(*) from raw.{t}") for t in ("loads", "narratives", "tts_records", "questions")]
    hindsight(db, "demo", "--report-dir", tmp_path / "reports")
    assert [scalar(db, f"select count(*) from raw.{t}") for t in ("loads", "narratives", "tts_records", "questions")] == before


def test_status_reports_loads_quarantine_and_skips(demo_warehouse):
    db, _, _ = demo_warehouse
    out = hindsight(db, "status").stdout
    assert "sepsis  H" in out and "glp1    L" in out
    assert "calendar_year" in out and "invalid_json" in out
    assert "demo-sepsis-01.csv" in out and "which was loaded" in out  # the skipped duplicate format
    assert "ExpectColumnValuesToMatchRegex" in out


def test_build_succeeds_on_an_empty_warehouse(tmp_path):
    db = new_warehouse(tmp_path)
    hindsight(db, "build")
    assert_dbt_passed(db)
    for mart in public_marts():
        assert (scalar(db, f"select count(*) from main.{mart}") > 0) == (mart in SELF_DESCRIBING), mart


def test_plain_dbt_build_in_the_project_root_uses_hindsight_db(demo_warehouse, tmp_path):
    source, _, _ = demo_warehouse
    db = tmp_path / "plain.duckdb"
    db.write_bytes(source.read_bytes())
    dbt = os.path.join(os.path.dirname(sys.executable), "dbt")
    done = subprocess.run([dbt, "build", "--select", "dim_cases"], cwd=PROJECT, capture_output=True, text=True,
                          env=cli_env(db))
    assert done.returncode == 0, done.stdout[-3000:]
    assert scalar(db, "select count(*) from dim_cases") == 8


def test_the_code_checks_run_when_selected_and_never_in_a_refresh(demo_warehouse, tmp_path):
    """Unit tests and `equivalence` checks test the code: a plain `dbt build` leaves them out
    (selectors.yml's default), as `hindsight build` does (test_build_scope.py); selected, they all
    run and pass on the demo."""
    source, _, _ = demo_warehouse
    db = tmp_path / "checks.duckdb"
    db.write_bytes(source.read_bytes())
    dbt = os.path.join(os.path.dirname(sys.executable), "dbt")

    def listed(*args):
        done = subprocess.run([dbt, "ls", "-q", "--output", "json", "--output-keys", "resource_type name tags", *args],
                              cwd=PROJECT, capture_output=True, text=True, env=cli_env(db))
        assert done.returncode == 0, done.stdout[-3000:]
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    refresh = listed()
    assert {n["resource_type"] for n in refresh} >= {"model", "seed", "test"}
    assert not [n for n in refresh if n["resource_type"] == "unit_test" or "equivalence" in n.get("tags", [])]
    checks = listed("--select", "resource_type:unit_test", "tag:equivalence")
    assert sum(n["resource_type"] == "unit_test" for n in checks) >= 20
    assert [n["name"] for n in checks if n["resource_type"] != "unit_test"] == ["assert_bootstrap_cis_match_pure_sql"]

    # `dbt test`: a `dbt build` runs a unit test only with its model selected too
    done = subprocess.run([dbt, "test", "--select", "resource_type:unit_test", "tag:equivalence"], cwd=PROJECT,
                          capture_output=True, text=True, env=cli_env(db))
    assert done.returncode == 0, done.stdout[-3000:]
    assert_dbt_passed(db)
    ran = {r["unique_id"].split(".")[-1] for r in dbt_results(db) if not r["unique_id"].startswith("operation.")}
    assert ran == {n["name"] for n in checks}


def test_demo_answers_are_scored_and_the_table_is_printed(demo_warehouse):
    db, output, _ = demo_warehouse
    assert "metrics with 95% case-clustered bootstrap CIs" in output and "sepsis / sim:hindsight@0.3" in output
    prospective = query(db, """
        select metric, min(estimate), max(estimate) from agg_metrics
        where model = 'sim:prospective' group by metric order by metric""")
    assert prospective == [("acc", 1.0, 1.0), ("air", 0.0, 0.0), ("delta_acc", 0.0, 0.0),
                           ("delta_htr", 0.0, 0.0), ("hbr", 0.0, 0.0), ("htr", 0.0, 0.0)]
    # every answer the simulators gave is one row of fct_answers, all parsed
    assert scalar(db, "select count(*) from fct_answers") == scalar(db, "select count(*) from raw.responses") > 0
    assert scalar(db, "select count(*) from fct_answers where parse_status = 'invalid'") == 0


def test_sql_draws_equal_the_numpy_draws(demo_warehouse):
    from ingest.stats import bootstrap

    db, _, _ = demo_warehouse
    for cohort in ("sepsis", "glp1"):
        cases = [r[0] for r in query(
            db, "select case_id from intermediate.int_bootstrap_cases where cohort = ? order by case_index", [cohort])]
        weights = bootstrap.weights(2026, cohort, len(cases), 2000)
        sql = query(db, "select replicate, case_id, multiplicity from fct_bootstrap_samples where cohort = ?", [cohort])
        from_sql = [[0] * len(cases) for _ in range(2000)]
        for replicate, case_id, multiplicity in sql:
            from_sql[replicate][cases.index(case_id)] = multiplicity
        assert weights.astype(int).tolist() == from_sql
