"""Refresh at scale (issue 16): the scored facts are incremental, and an incremental build equals a
build from scratch, mart for mart and row for row, after each kind of change it tracks: a new
model's answers, newer answers in existing cells (the newest one of a cell changes), a new judgment
of an existing free response, a reloaded question, and a change to the scoring code (every answer re-scored)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import PROJECT, cli_env, dbt_results, hindsight, query, scalar, write_jsonl
from ingest.build import dbt_executable
from ingest.db import connect

sys.path.insert(0, str(PROJECT / "bench"))
from compare_marts import compare  # noqa: E402

pytestmark = pytest.mark.slow


def full_refresh_equals(db, tmp_path, name: str) -> None:
    scratch = tmp_path / f"{name}-scratch.duckdb"
    shutil.copy(db, scratch)
    hindsight(scratch, "build", "--full-refresh", "--exclude", "resource_type:test", "resource_type:unit_test")
    assert compare(str(db), str(scratch)), f"{name}: the incremental build differs from a build from scratch"


def test_incremental_builds_equal_builds_from_scratch(demo_warehouse, tmp_path):
    db = tmp_path / "w.duckdb"
    shutil.copy(demo_warehouse[0], db)
    before = scalar(db, "select max(scored_at) from fct_answers")
    fast = ["--exclude", "resource_type:test", "resource_type:unit_test"]

    # a new model's answers: only they are scored, nothing else is rewritten
    hindsight(db, "answer", "--model", "sim:noise@0.5", "--variant", "standard")
    hindsight(db, "build", *fast)
    assert scalar(db, "select count(*) from fct_answers where model <> 'sim:noise@0.5' and scored_at > ?", [before]) == 0
    assert scalar(db, "select count(*) from fct_answers where model = 'sim:noise@0.5'") > 0
    # the per-case sums and the estimates of the other models are kept, not recomputed
    for table in ("int_metric_case_sums", "int_metric_estimates", "int_metric_estimates_by_eval_target"):
        assert scalar(db, f"select max(scored_through) from intermediate.{table}") > before
    assert scalar(db, "select count(*) from intermediate.int_metric_estimates "
                      "where model <> 'sim:noise@0.5' and scored_through > ?", [before]) == 0
    full_refresh_equals(db, tmp_path, "new-model")

    # newer answers in cells that had one: the newest answer of those cells changes
    rows = query(db, """select question_id, model, condition, visibility, prompt_variant, format
                        from fct_answers where model = 'sim:prospective' and is_latest_in_cell and format = 'true/false'
                        order by response_id limit 5""")
    replay = [{"question_id": q, "model": m, "condition": c, "visibility": v, "prompt_variant": p, "answer": "maybe"}
              for q, m, c, v, p, _ in rows]
    # and a model that answered some of the same questions with the full record only: no pairs
    full_only = [{**answer, "model": "replayed:full-only", "visibility": "full", "answer": "true"} for answer in replay]
    hindsight(db, "load", "responses", write_jsonl(tmp_path / "newer.jsonl", replay + full_only))
    done = hindsight(db, "build", *fast)
    # the same project and arguments as the last build: only what depends on the new rows runs
    assert "loaded since the last build: loads, responses" in done.stderr
    ran = {r["unique_id"] for r in dbt_results(db)}
    assert "model.hindsight.int_answers_scored" in ran and "model.hindsight.fct_tts_events" not in ran
    newest = query(db, """select f.question_id, t.answer, f.parse_status from fct_answers f
                          inner join fct_answer_texts t using (response_id)
                          where f.model = 'sim:prospective' and f.is_latest_in_cell and t.answer = 'maybe'""")
    assert len(newest) == 5 and {r[2] for r in newest} == {"invalid"}
    answered = {(a["question_id"], a["condition"], a["prompt_variant"]) for a in full_only if a["condition"] != "0"}
    assert answered and query(db, """select sum(n_paired), sum(n_expected - n_missing_full), sum(n_expected - n_missing_masked)
                                     from agg_pair_coverage where model = 'replayed:full-only'""") == [(0, len(answered), 0)]
    full_refresh_equals(db, tmp_path, "newer-answers")

    # a new judgment of a free response already scored
    judged = query(db, """select question_id, model, condition, visibility, prompt_variant, acc from fct_answers
                          where format = 'free response' and is_latest_in_cell and eval_target in ('accuracy', 'both')
                          and judge_model is not null order by response_id limit 1""")[0]
    line = {"kind": "individual", "question_id": judged[0], "model": judged[1], "condition": judged[2],
            "visibility": judged[3], "prompt_variant": judged[4], "judge": "people:panel-1",
            "accuracy_score": 0.5 if judged[5] != 0.5 else 1, "htr_score": 0}
    hindsight(db, "load", "judgments", write_jsonl(tmp_path / "judgments.jsonl", [line]))
    hindsight(db, "build", *fast)
    rescored = query(db, """select acc, judge_model from fct_answers where question_id = ? and model = ? and condition = ?
                            and visibility = ? and prompt_variant = ? and is_latest_in_cell""", list(judged[:5]))
    assert rescored == [(line["accuracy_score"], "people:panel-1")]
    full_refresh_equals(db, tmp_path, "new-judgment")

    # a reloaded question (its reference answer flipped): its answers alone are scored again
    question_id, cohort, payload = query(db, """select q.question_id, q.cohort, q.payload from raw.questions q
        inner join dim_questions d using (question_id)
        where d.format = 'true/false' and d.eval_target in ('accuracy', 'both') order by 1 limit 1""")[0]
    reloaded = {**json.loads(payload), "question_id": question_id, "cohort": cohort}
    reloaded["correct_answer"] = "false" if reloaded["correct_answer"].lower() == "true" else "true"
    valid_answers = "from fct_answers where question_id = ? and is_latest_in_cell and parse_status = 'valid'"
    accuracy = f"select sum(acc) {valid_answers}"
    valid = scalar(db, f"select count(*) {valid_answers}", [question_id])
    right_before = scalar(db, accuracy, [question_id])
    reload_at = scalar(db, "select max(scored_at) from fct_answers")
    hindsight(db, "load", "questions", write_jsonl(tmp_path / "reloaded.jsonl", [reloaded]))
    hindsight(db, "build", *fast)
    assert valid > 0 and scalar(db, accuracy, [question_id]) == valid - right_before       # every valid answer flips
    assert scalar(db, "select count(distinct question_id) from fct_answers where scored_at > ?", [reload_at]) == 1
    full_refresh_equals(db, tmp_path, "reloaded-question")

    # other bootstrap settings re-estimate every cell, and the default ones again
    hindsight(db, "build", *fast, "--vars", "{bootstrap_replicates: 200}")
    assert query(db, "select distinct bootstrap_replicates from agg_metrics") == [(200,)]
    hindsight(db, "build", *fast)
    full_refresh_equals(db, tmp_path, "bootstrap-settings")


def test_a_change_to_the_scoring_code_rescores_every_answer(demo_warehouse, tmp_path):
    """The scoring fingerprint covers the scoring models and the parser-version macro: an edit there
    re-scores every answer without --full-refresh (here: a bumped parser version, in a copy of the
    project)."""
    db = tmp_path / "w.duckdb"
    shutil.copy(demo_warehouse[0], db)
    answers = scalar(db, "select count(*) from fct_answers")
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(".venv", "target", "logs", "*.duckdb*", ".git", "reports"))
    macro = project / "macros" / "answer_parser_version.sql"
    macro.write_text(macro.read_text().replace("'answer-parser-1'", "'answer-parser-1-edited'"))
    done = subprocess.run([dbt_executable(), "run", "--project-dir", str(project), "--profiles-dir", str(project)],
                          env=cli_env(db), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
    assert scalar(db, "select count(*) from fct_answers where parser_version = 'answer-parser-1-edited'") == answers


def test_the_key_tests_of_the_incremental_facts_catch_a_key_the_newest_build_repeats(demo_warehouse, tmp_path):
    """The big facts check the keys of the rows the newest build or load wrote (newest_keys_unique): a
    repeated key there fails the tests; the same check passes on the untouched warehouse."""
    db = tmp_path / "w.duckdb"
    shutil.copy(demo_warehouse[0], db)
    tests = ["test", "--select", "test_name:newest_keys_unique"]
    assert subprocess.run([dbt_executable(), *tests, "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT)],
                          env=cli_env(db), capture_output=True).returncode == 0
    with connect(db) as con:
        for table, newest in (("intermediate.int_answers_scored", "scored_at"), ("intermediate.int_answer_pairs", "scored_at"),
                              ("intermediate.int_metric_case_sums", "scored_through"), ("raw.responses", "load_id")):
            con.execute(f"insert into {table} select * from {table} where {newest} = (select max({newest}) from {table}) limit 1")
    done = subprocess.run([dbt_executable(), *tests, "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT)],
                          env=cli_env(db), capture_output=True, text=True)
    assert done.returncode != 0
    failed = [r["unique_id"].split(".")[2] for r in dbt_results(db) if r["status"] == "fail"]
    models = ["int_answers_scored", "int_answer_pairs", "int_metric_case_sums", "stg_raw__responses",
              "fct_answer_texts"]
    assert len(failed) == len(models) and all(any(name.startswith(f"newest_keys_unique_{m}_") for name in failed)
                                              for m in models), failed


def test_a_key_checked_as_bitmaps_fails_on_a_repeated_position_or_two_rows_without_one(tmp_path):
    """newest_keys_unique with dense_within, from scratch: a group whose positions repeat, or that has two
    rows without a position, fails with its repeated keys listed; distinct positions in every group pass."""
    db = tmp_path / "bitmap.duckdb"
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    shutil.copytree(PROJECT / "tests" / "dbt" / "generic", project / "tests" / "generic")
    (project / "dbt_project.yml").write_text("name: bitmap\nversion: '1.0.0'\nconfig-version: 2\nprofile: hindsight\n")
    shutil.copy(PROJECT / "profiles.yml", project / "profiles.yml")
    (project / "models" / "keyed.sql").write_text("select * from read_csv('rows.csv')")
    (project / "models" / "keyed.yml").write_text(
        "models:\n  - name: keyed\n    data_tests:\n      - newest_keys_unique:\n          arguments:\n"
        "            combination_of_columns: [grp, pos]\n            newest_by: built\n"
        "            dense_within: {group: grp, position: pos}\n")
    cases = {"distinct": ("a,0\na,1\nb,1\nb,7\n,3\n", 0), "repeated": ("a,0\na,1\nb,1\nb,1\nb,1\n,1\n,1\n", 2),
             "unpositioned": ("a,0\na,\na,\nb,\n", 1)}
    for name, (rows, failures) in cases.items():
        (project / "rows.csv").write_text("grp,pos,built\n" + "".join(f"{line},1\n" for line in rows.splitlines()))
        done = subprocess.run([dbt_executable(), "build", "--project-dir", str(project), "--profiles-dir", str(project)],
                              env=cli_env(db), capture_output=True, text=True, cwd=project)
        assert (done.returncode == 0) == (failures == 0), (name, done.stdout[-2000:])
        result = next(r for r in dbt_results(db) if r["unique_id"].startswith("test."))
        assert result["failures"] == failures, (name, result)
        assert "bitstring_agg" in result["compiled_code"], name
