"""`hindsight load questions`: row-level rejection with file, line, field and fix."""
import json

from conftest import DEMO, query, scalar, write_jsonl

GOOD = {
    "case_id": "demo-sepsis-01", "question": "Was the lactate raised?", "format": "multiple choice",
    "options": ["A. <10%", "B. 10-30%", "C. 31-60%", "D. >60%"], "options_type": "ordinal",
    "eval_target": "both", "reference_time": "admission", "early_cutoff": {"event": "lactate", "time": "24"},
    "correct_answer": "A. <10%", "hindsight_trap": "D. >60%", "hindsight_trap_explanation": "later shock",
}


def load_sepsis_cases(cli):
    base = DEMO / "sepsis"
    cli("load", "cases", "--cohort", "sepsis", "--narratives", base / "narratives", "--tts", f"H={base / 'tts_h'}")


def test_bad_rows_are_rejected_with_location_and_fix_and_the_rest_loads(cli, warehouse, tmp_path):
    load_sepsis_cases(cli)
    rows = [
        GOOD,
        dict(GOOD, question="Cutoff is words", early_cutoff={"event": "x", "time": "about a day"}),
        dict(GOOD, question="Unknown case", case_id="no-such-case"),
        dict(GOOD, question="Answer not an option", correct_answer="E. never"),
        dict(GOOD, question="Trap not an option", hindsight_trap="Z"),
        "{not json",
        dict(GOOD, question="Letter answers are options", correct_answer="(A)", hindsight_trap="D"),
        dict(GOOD, question="Bad format", format="essay"),
        dict(GOOD, question="TF answer", format="true/false", options=None, options_type=None, correct_answer="maybe"),
    ]
    path = write_jsonl(tmp_path / "q.jsonl", rows)
    result = cli("load", "questions", path, expect=1)
    assert "2 questions added" in result.output and "7 rejected" in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("  error:")]
    assert f"{path}:2: early_cutoff.time: cutoff 'about a day' is not a number" in errors[0]
    assert "Fix: give the cutoff as a plain number" in errors[0]
    assert f"{path}:3: case_id: case 'no-such-case' is not loaded" in errors[1]
    assert f"{path}:4: correct_answer: 'E. never' is not among the options" in errors[2]
    assert f"{path}:5: hindsight_trap:" in errors[3]
    assert f"{path}:6: (line): not valid JSON" in errors[4]
    assert f"{path}:8: format:" in errors[5]
    assert f"{path}:9: correct_answer: 'maybe' is not true or false" in errors[6]
    stored = query(warehouse, "select line_number, field from raw.rejected_rows order by line_number")
    assert stored == [(2, "early_cutoff.time"), (3, "case_id"), (4, "correct_answer"), (5, "hindsight_trap"),
                      (6, "(line)"), (8, "format"), (9, "correct_answer")]
    payload = json.loads(scalar(warehouse, "select payload from raw.questions where line_number = 1"))
    assert payload["early_cutoff"]["time"] == "24" and payload["cohort"] == "sepsis"


def test_question_ids_are_derived_stably_and_loads_are_idempotent(cli, warehouse, tmp_path):
    load_sepsis_cases(cli)
    path = write_jsonl(tmp_path / "q.jsonl", [GOOD, dict(GOOD, question_id="given-id", question="Another")])
    cli("load", "questions", path)
    ids = sorted(r[0] for r in query(warehouse, "select question_id from raw.questions"))
    assert ids[0] == "given-id" and ids[1].startswith("q_")
    result = cli("load", "questions", path)
    assert "already loaded" in result.output
    # the same rows in another file are recognised too
    copy = write_jsonl(tmp_path / "copy.jsonl", [GOOD, dict(GOOD, question_id="given-id", question="Another")] + [
        dict(GOOD, question="A third")])
    assert "1 questions added, 2 already present" in cli("load", "questions", copy).output
    assert scalar(warehouse, "select count(*) from raw.questions") == 3


def test_a_file_missing_a_required_field_everywhere_is_rejected_whole(cli, warehouse, tmp_path):
    load_sepsis_cases(cli)
    rows = [{k: v for k, v in GOOD.items() if k != "early_cutoff"} for _ in range(2)]
    path = write_jsonl(tmp_path / "q.jsonl", rows)
    result = cli("load", "questions", path, expect=1)
    assert "required fields missing from every line: early_cutoff" in result.output
    assert scalar(warehouse, "select count(*) from raw.questions") == 0
    assert scalar(warehouse, "select status from raw.loads where kind = 'questions'") == "rejected"
    again = cli("load", "questions", path, expect=2)
    assert "rejected whole by load" in again.output


def test_ambiguous_case_needs_a_cohort(cli, warehouse, tmp_path):
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "demo-sepsis-01.bsv").write_text("admitted | 0\n")
    cli("load", "cases", "--cohort", "one", "--tts", f"H={folder}")
    cli("load", "cases", "--cohort", "two", "--tts", f"H={folder}")
    path = write_jsonl(tmp_path / "q.jsonl", [GOOD])
    assert "pass --cohort" in cli("load", "questions", path, expect=1).output
    path2 = write_jsonl(tmp_path / "q2.jsonl", [dict(GOOD, question="x2")])
    cli("load", "questions", path2, "--cohort", "two")
    assert scalar(warehouse, "select cohort from raw.questions") == "two"


def test_demo_questions_all_load(cli, warehouse):
    for cohort in ("sepsis", "glp1"):
        base = DEMO / cohort
        cli("load", "cases", "--cohort", cohort, "--narratives", base / "narratives", "--tts", f"H={base / 'tts_h'}")
    assert "80 questions added" in cli("load", "questions", DEMO / "questions.jsonl").output


def test_question_sets_off_the_design_load_and_are_listed_in_status(cli, warehouse, tmp_path):
    """§3.3 is a warning for loaded questions: a set that misses it loads whole, and status says how."""
    load_sepsis_cases(cli)
    mc = dict(GOOD, question="How likely?", format="multiple choice", options=["A. low", "B. mid", "C. high"],
              options_type="ordinal", correct_answer="A. low", hindsight_trap="A")
    path = write_jsonl(tmp_path / "q.jsonl", [GOOD, mc, dict(GOOD, question="Stable?", eval_target="accuracy")])
    assert "3 questions added" in cli("load", "questions", path).output
    status = cli("status").output
    lines = [line.strip() for line in status.split("question sets off the paper's design")[1].split("\n\n")[0].splitlines()[1:]]
    case = f"sepsis {GOOD['case_id']}"
    assert f"{case}: 3 questions instead of 10" in lines
    assert f"{case}: eval targets 1 accuracy, 0 hindsight_bias, 2 both instead of 2 accuracy, 3 hindsight_bias, 5 both" in lines
    assert f"{case}: no free response and no true/false question (the design mixes all three formats)" in lines
    assert any(line.endswith("multiple choice with 3 options instead of 4") for line in lines)
    assert any(line.endswith("the hindsight trap is the reference answer") for line in lines)
    assert any(line.endswith("accuracy question with a hindsight trap or explanation (both must be null)") for line in lines)
