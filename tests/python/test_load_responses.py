"""`hindsight load responses`: replayed answers, validated row by row."""
from conftest import DEMO, query, scalar, write_jsonl


def test_responses_load_verbatim_and_bad_rows_are_rejected(cli, warehouse, tmp_path):
    base = DEMO / "sepsis"
    cli("load", "cases", "--cohort", "sepsis", "--tts", f"H={base / 'tts_h'}")
    questions = write_jsonl(tmp_path / "q.jsonl", [{
        "question_id": "q1", "case_id": "demo-sepsis-01", "question": "Shock?", "format": "true/false",
        "eval_target": "both", "early_cutoff": {"event": "e", "time": 6}, "correct_answer": "false",
        "hindsight_trap": "true"}])
    cli("load", "questions", questions)
    good = {"question_id": "q1", "model": "openai:gpt-x (replay)", "condition": "2.1", "visibility": "masked",
            "prompt_variant": "standard", "answer": "false", "evidence": "no vasopressor yet"}
    rows = [
        good,
        dict(good, visibility="full", answer=True),
        dict(good, condition="4"),
        dict(good, condition="0"),
        dict(good, question_id="nope"),
        dict(good, visibility="hidden"),
        good,  # exact repeat: stored once
    ]
    path = write_jsonl(tmp_path / "r.jsonl", rows)
    result = cli("load", "responses", path, expect=1)
    assert "2 responses added, 1 already present, 4 rejected" in result.output
    assert f"{path}:3: condition: '4' is not a condition" in result.output
    assert f"{path}:4: visibility: condition 0 has no masked variant" in result.output
    assert f"{path}:5: question_id: question 'nope' is not loaded" in result.output
    assert f"{path}:6: visibility:" in result.output
    stored = query(warehouse, "select model, condition, visibility, answer from raw.responses order by visibility")
    assert stored == [("openai:gpt-x (replay)", "2.1", "full", "true"), ("openai:gpt-x (replay)", "2.1", "masked", "false")]
    assert scalar(warehouse, "select count(*) from raw.rejected_rows where kind = 'responses'") == 4
