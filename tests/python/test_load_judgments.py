"""`hindsight load judgments`: free-response scores made elsewhere, used by the marts exactly
as `hindsight judge`'s are; bad lines named with file, line, field and fix while the rest loads."""
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
    assert "4 judgments added, 0 already present, 4 rejected" in done.stdout
    for number, field in ((5, "accuracy_score"), (6, "model"), (7, "htr_score"), (8, "(line)")):
        assert f"{path}:{number}: {field}:" in done.stderr and "Fix:" in done.stderr, (number, done.stderr)
    assert "load or collect the answers first" in done.stderr

    hindsight(db, "build", *MODELS_ONLY)
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
    assert query(db, "select count(*) from raw.judgments")[0][0] == 4


def test_judgments_need_built_marts(tmp_path):
    db = new_warehouse(tmp_path)
    path = write_jsonl(tmp_path / "j.jsonl", [line(kind="individual", question_id="q", visibility="full")])
    done = hindsight(db, "load", "judgments", path, expect=2)
    assert "not built" in done.stderr and "hindsight build" in done.stderr
