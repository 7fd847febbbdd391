"""`hindsight load responses`: replayed answers, validated row by row."""
from datetime import datetime

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


def test_rows_inserted_through_arrow_equal_rows_bound_one_at_a_time():
    """insert_rows (what every loader appends with) stores what executemany stores, including the
    values Arrow cannot type as one column: integers beyond 64 bits, a column mixing text and numbers."""
    import duckdb

    from ingest.db import insert_rows
    rows = [(1, "a", None, datetime(2026, 1, 2, 3, 4, 5), 2**70, "x", 1.5, True),
            (2, None, "é\n'\\", None, 3, 7, None, False),
            (3, "c", "", datetime(2026, 1, 2), -1, None, 2, None)]
    con = duckdb.connect()
    typed = [row[:4] + row[6:] for row in rows]              # one Arrow type per column: not row by row
    for table, columns, values in (("arrow", "big hugeint, mixed varchar, ", rows), ("typed", "", typed)):
        for how in ("arrow", "bound"):
            con.execute(f"create table {table}_{how} (i integer, s varchar, t varchar, ts timestamp, {columns}"
                        "x double, b boolean)")
        insert_rows(con, f"{table}_arrow", values)
        con.executemany(f"insert into {table}_bound values ({', '.join('?' * len(values[0]))})", values)
        stored = con.execute(f"select * from {table}_arrow order by i").fetchall()
        assert stored == con.execute(f"select * from {table}_bound order by i").fetchall()
    assert con.execute("select big, mixed, t from arrow_arrow where i = 2").fetchone() == (3, "7", "é\n'\\")
    assert con.execute("select ts, x from typed_arrow where i = 1").fetchone() == (datetime(2026, 1, 2, 3, 4, 5), 1.5)
    con.execute("create table numbers (i integer, s varchar)")
    insert_rows(con, "numbers", [(i, str(i)) for i in range(1000)])
    insert_rows(con, "numbers", [])
    assert con.execute("select count(*), sum(i), count(distinct s) from numbers").fetchone() == (1000, 499500, 1000)
