"""`hindsight load judgments`: free-response scores made elsewhere, used by the marts exactly
as `hindsight judge`'s are; bad lines named with file, line, field and fix while the rest loads;
loaded in any order before one build, which matches them and lists what it could not."""
from __future__ import annotations

import json

import pytest

from conftest import hindsight, new_warehouse, query, write_jsonl
from ingest.demo.run import load_demo

pytestmark = pytest.mark.slow
MODELS_ONLY = ["--exclude", "resource_type:test", "resource_type:unit_test"]


@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    """The demo corpus with replayed condition-2.1 answers to one free-response question of each
    eval target the demo has (hindsight_bias, both)."""
    db = new_warehouse(tmp_path_factory.mktemp("judgments"))
    load_demo(db)
    hindsight(db, "build", *MODELS_ONLY)
    picked = dict(query(db, """select eval_target, min(question_id) from dim_questions
                               where format = 'free response' group by eval_target"""))
    assert set(picked) == {"hindsight_bias", "both"}
    replay = [{"question_id": qid, "model": "replay:m", "condition": "2.1", "visibility": visibility,
               "answer": f"{visibility} answer to {qid}"}
              for qid in picked.values() for visibility in ("full", "masked")]
    hindsight(db, "load", "responses", write_jsonl(db.parent / "responses.jsonl", replay))
    hindsight(db, "build", *MODELS_ONLY)
    return db, picked


def line(**fields):
    return {"model": "replay:m", "condition": "2.1", "judge": "people:panel-1", **fields}


def test_judgments_made_elsewhere_score_answers_and_pairs_by_eval_target(answered, tmp_path):
    source, picked = answered
    db = new_warehouse(tmp_path)
    db.write_bytes(source.read_bytes())
    both, bias = picked["both"], picked["hindsight_bias"]
    path = write_jsonl(tmp_path / "judgments.jsonl", [
        line(kind="individual", question_id=both, visibility="full", accuracy_score=1, htr_score=0),
        # a hindsight_bias question uses HTR only: the accuracy score is stored and ignored
        line(kind="individual", question_id=bias, visibility="masked", accuracy_score=1, htr_score=0.5),
        line(kind="paired", question_id=both, full_accuracy_score=0.5, masked_accuracy_score=1, full_htr_score=1,
             masked_htr_score=0, full_equals_masked=False, hbr_score=0),
        line(kind="paired", question_id=bias, full_accuracy_score=1, masked_accuracy_score=0, full_htr_score=1,
             masked_htr_score=0, full_equals_masked=True),
        line(kind="individual", question_id=both, visibility="masked", accuracy_score=0.7, htr_score=0),
        line(kind="individual", question_id=both, visibility="masked", model="replay:other", accuracy_score=1, htr_score=0),
        line(kind="individual", question_id=bias, visibility="full", accuracy_score=1),
        "{not json",
    ])
    done = hindsight(db, "load", "judgments", path, expect=1)
    assert "6 judgments added, 0 already present, 2 rejected" in done.stdout
    for number, field in ((5, "accuracy_score"), (8, "(line)")):
        assert f"{path}:{number}: {field}:" in done.stderr and "Fix:" in done.stderr, (number, done.stderr)

    # what the line alone cannot tell (no such answer, a score the eval target uses) the build says
    build = hindsight(db, "build", *MODELS_ONLY[:1], "resource_type:unit_test")
    assert "WARN" in build.stdout and "warn_loaded_judgments_matched" in build.stdout
    unmatched = query(db, "select line_number, reason from intermediate.int_judgments_unmatched order by 1")
    assert unmatched == [(6, "no_answer"), (7, "score_missing")]
    status = hindsight(db, "status").stdout
    assert "loaded judgments the last build could not use" in status
    assert "no_answer" in status and f"{path}:6" in status and "score_missing" in status
    answers = {(qid, vis): (acc, htr, judge) for qid, vis, acc, htr, judge in query(db, """
        select question_id, visibility, acc, htr, judge_model from fct_answers where model = 'replay:m'""")}
    assert answers[(both, "full")] == (1.0, 0.0, "people:panel-1")
    assert answers[(bias, "masked")] == (None, 0.5, "people:panel-1")     # Acc undefined for hindsight_bias
    pairs = {qid: row for qid, *row in query(db, """
        select question_id, delta_acc, delta_htr, air, hbr, judge_hbr_score, paired_judge_model
        from fct_answer_pairs where model = 'replay:m'""")}
    # §3.7 from the paired judgment: dAcc = 1 - 0.5, dHTR = 1 - 0, AIR = 1 - equal, HBR = 1[1 = 1] x 1
    assert pairs[both] == [0.5, 1.0, 1.0, 1.0, 0.0, "people:panel-1"]
    assert pairs[bias] == [None, 1.0, 0.0, None, None, "people:panel-1"]

    # loading again adds nothing: the same file is passed over, the same lines elsewhere are duplicates
    assert "already loaded" in hindsight(db, "load", "judgments", path).stdout
    again = write_jsonl(tmp_path / "again.jsonl", [json.loads(json.dumps(x)) for x in [
        line(kind="paired", question_id=bias, full_accuracy_score=1, masked_accuracy_score=0, full_htr_score=1,
             masked_htr_score=0, full_equals_masked=True),
        line(kind="individual", question_id=both, visibility="full", accuracy_score=1, htr_score=0)]])
    assert "0 judgments added, 2 already present, 0 rejected" in hindsight(db, "load", "judgments", again).stdout
    assert query(db, "select count(*) from raw.loaded_judgments")[0][0] == 6


def test_judgments_load_before_the_questions_and_answers_they_judge(answered, tmp_path):
    """Load everything, then build, in any order: judgments first, then cases and questions, then the
    answers; one build matches them and scores the answers with them."""
    source, picked = answered
    db = new_warehouse(tmp_path)
    both = picked["both"]
    path = write_jsonl(tmp_path / "judgments.jsonl", [
        line(kind="individual", question_id=both, visibility="full", accuracy_score=0.5, htr_score=1),
        line(kind="paired", question_id=both, full_accuracy_score=0.5, masked_accuracy_score=1, full_htr_score=1,
             masked_htr_score=0, full_equals_masked=False)])
    done = hindsight(db, "load", "judgments", path)
    assert "2 judgments added" in done.stdout and "hindsight build" in done.stdout
    assert "not matched to answers yet" in hindsight(db, "status").stdout
    load_demo(db)
    hindsight(db, "load", "responses", source.parent / "responses.jsonl")
    hindsight(db, "build", *MODELS_ONLY)
    assert query(db, "select acc, htr, judge_model from fct_answers where model = 'replay:m' and question_id = ? "
                     "and visibility = 'full'", [both]) == [(0.5, 1.0, "people:panel-1")]
    assert query(db, "select delta_acc, delta_htr from fct_answer_pairs where model = 'replay:m' and question_id = ?",
                 [both]) == [(0.5, 1.0)]
    assert query(db, "select count(*) from intermediate.int_judgments_unmatched") == [(0,)]
    assert "could not use" not in hindsight(db, "status").stdout
