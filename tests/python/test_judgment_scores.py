"""A judgment's score columns are declared once (dbt_project.yml's var judgment_score_columns): the raw
tables' DDL and every model that carries a judgment's scores take them from there."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb

from conftest import PROJECT, cli_env, new_warehouse
from ingest.config import judgment_score_columns, raw_ddl

CARRIERS = ["stg_raw__judgments", "stg_raw__loaded_judgments", "int_judgments"]


def test_the_raw_tables_hold_the_declared_scores_in_order():
    scores = judgment_score_columns()
    assert ("accuracy_score", "double") in scores and ("hbr_score", "double") in scores
    with duckdb.connect() as con:
        con.execute(raw_ddl())
        for table in ("judgments", "loaded_judgments"):
            columns = con.execute("select column_name, lower(data_type) from information_schema.columns where table_schema = "
                                  "'raw' and table_name = ? order by ordinal_position", [table]).fetchall()
            assert [column for column in columns if column[0] in dict(scores)] == scores, table


def test_one_more_declared_score_is_a_column_of_every_model_that_carries_scores(tmp_path):
    db = new_warehouse(tmp_path)
    declared = [list(score) for score in judgment_score_columns()] + [["calibration_score", "double"]]
    target = tmp_path / "target"
    done = subprocess.run([str(Path(sys.executable).parent / "dbt"), "compile", "--select", *CARRIERS,
                           "--vars", json.dumps({"judgment_score_columns": declared}), "--target-path", str(target)],
                          cwd=PROJECT, capture_output=True, text=True, env=cli_env(db))
    assert done.returncode == 0, done.stdout[-3000:]
    for model in CARRIERS:
        compiled = next(target.glob(f"compiled/**/{model}.sql")).read_text()
        assert all(name in compiled for name, _ in declared), model
