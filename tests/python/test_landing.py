"""`hindsight export raw`: the raw tables as a Parquet landing zone (one Hive partition per load,
a snapshot for the tables without a load id), written incrementally and read back equal."""
from __future__ import annotations

import json

import duckdb

from conftest import DEMO, write_jsonl

SEPSIS = DEMO / "sepsis"


def landed_equals_raw(db, landing) -> list[str]:
    """The raw tables whose rows differ from what the landing zone holds (read as another engine would)."""
    differ = []
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [r[0] for r in con.execute("select table_name from information_schema.tables where table_schema = 'raw' "
                                            "and table_type = 'BASE TABLE'").fetchall()]
        for table in tables:
            columns = [r[0] for r in con.execute("select column_name from information_schema.columns where table_schema = 'raw' "
                                                 "and table_name = ? order by ordinal_position", [table]).fetchall()]
            if not con.execute(f"select count(*) from raw.{table}").fetchone()[0]:
                continue
            if "load_id" in columns:
                landed = (f"select {', '.join(columns)} from read_parquet('{landing}/{table}/load_id=*/*.parquet', "
                          "hive_partitioning = true, hive_types = {'load_id': integer})")
            else:
                landed = f"select * from read_parquet('{landing}/{table}/*.parquet')"
            diff = con.execute(f"""select count(*) from ((select * from raw.{table} except all {landed})
                                   union all ({landed} except all select * from raw.{table}))""").fetchone()[0]
            if diff:
                differ.append(table)
    return differ


def test_raw_lands_once_per_load_and_reads_back_equal(cli, warehouse, tmp_path):
    cli("load", "cases", "--cohort", "sepsis", "--narratives", SEPSIS / "narratives", "--tts", f"H={SEPSIS / 'tts_h'}")
    landing = tmp_path / "landing"
    first = cli("export", "raw", "--out", landing).output
    assert "load partitions" in first and "0 already there" in first
    assert landed_equals_raw(warehouse, landing) == []
    assert sorted(p.name for p in (landing / "narratives").iterdir()) == ["load_id=1"]
    manifest = json.loads((landing / "_landing.json").read_text())
    assert manifest["warehouse_version"] and manifest["tables"]["narratives"]["loads"]
    stamp = (landing / "narratives" / "load_id=1" / "part-0.parquet").stat().st_mtime_ns

    again = cli("export", "raw", "--out", landing).output
    assert "0 load partitions and 0 snapshots written now" in again
    # a new load adds its partition; the first one is not written again
    questions = write_jsonl(tmp_path / "q.jsonl", [{
        "question_id": "q1", "case_id": "demo-sepsis-01", "question": "Shock?", "format": "true/false",
        "eval_target": "both", "early_cutoff": {"event": "e", "time": 6}, "correct_answer": "false",
        "hindsight_trap": "true"}])
    cli("load", "questions", questions)
    third = cli("export", "raw", "--out", landing).output
    assert "written now" in third and "questions" in third and "narratives" not in third.split("(")[1]
    assert (landing / "narratives" / "load_id=1" / "part-0.parquet").stat().st_mtime_ns == stamp
    assert landed_equals_raw(warehouse, landing) == []
    assert not list(landing.rglob("*.partial"))


def test_a_load_that_grew_is_written_again_and_a_file_is_refused(cli, warehouse, tmp_path):
    cli("load", "cases", "--cohort", "sepsis", "--tts", f"H={SEPSIS / 'tts_h'}")
    landing = tmp_path / "landing"
    cli("export", "raw", "--out", landing)
    # a runner appends under its load id as answers arrive: the grown partition is rewritten
    with duckdb.connect(str(warehouse)) as con:
        con.execute("insert into raw.tts_records select * from raw.tts_records limit 3")
    out = cli("export", "raw", "--out", landing).output
    assert "1 load partitions" in out and "tts_records" in out
    assert landed_equals_raw(warehouse, landing) == []
    target = tmp_path / "a-file"
    target.write_text("x")
    refused = cli("export", "raw", "--out", target, expect=2)
    assert "is a file, not a folder" in refused.output and "Traceback" not in refused.output
