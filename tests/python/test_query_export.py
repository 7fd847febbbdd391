"""Analyst access: read-only queries, exports, and a BI connection through the
standard DuckDB SQLAlchemy driver."""
from __future__ import annotations

import json

import duckdb
import pytest
from sqlalchemy import create_engine, text

from conftest import cli_env, dbt_target, hindsight, new_warehouse
from ingest.config import __version__
from ingest.db import connect, serve_path
from ingest.demo.run import load_demo
from ingest.llm.answer import answer_requests
from ingest.publish.marts import public_marts

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    db = new_warehouse(tmp_path_factory.mktemp("bi"))
    load_demo(db)
    fast = ["--exclude", "resource_type:test", "resource_type:unit_test"]
    hindsight(db, "build", *fast)
    with connect(db) as con:
        answer_requests(con, "sim:hindsight@0.3", conditions=["0", "2.1", "2.2"], variants=["standard"])
    hindsight(db, "build", *fast)
    return db


@pytest.mark.parametrize("sql, refusal", [
    ("drop table dim_cases", "DROP is not a read"),
    ("insert into dim_cases select * from dim_cases", "INSERT is not a read"),
    ("attach 'other.duckdb'", "ATTACH is not a read"),
    ("copy dim_cases to 'out.csv'", "COPY is not a read"),
    ("install httpfs", "INSTALL is not a read"),
    ("select * from read_csv('/etc/passwd')", "reading files or URLs (read_csv)"),
    ("select * from '/etc/passwd'", "reading files or URLs"),
    ("select * from read_parquet('https://example.invalid/x.parquet')", "reading files or URLs"),
    ("select 1; drop table dim_cases", "2 statements"),
    ("pragma database_list", "is not a read"),
    ("selec nonsense from", "not valid SQL"),
])
def test_anything_but_a_read_is_refused(warehouse, sql, refusal):
    before = duckdb.connect(str(warehouse), read_only=True).execute("select count(*) from dim_cases").fetchone()
    out = hindsight(warehouse, "query", sql, expect=2, in_process=True).stdout
    assert refusal in out and "Fix:" in out
    assert duckdb.connect(str(warehouse), read_only=True).execute("select count(*) from dim_cases").fetchone() == before


@pytest.mark.parametrize("sql, message", [
    ("select estimat from agg_metrics", 'Referenced column "estimat" not found in FROM clause! Candidate bindings: "estimate"'),
    ("select * from agg_metric", "Table with name agg_metric does not exist! Did you mean \"agg_metrics\""),
    ("select cast(case_id as integer) from dim_cases", "Conversion Error: Could not convert string"),
    ("select * from dim_cases where cohort = 1", "Conversion Error"),
])
def test_an_ordinary_sql_mistake_is_one_line_with_the_engines_suggestion(warehouse, sql, message):
    done = hindsight(warehouse, "query", sql, expect=2)
    assert "Traceback" not in done.output and not done.stdout
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("error: query: ") and message in done.stderr and "Fix: correct the query" in done.stderr
    assert "LINE 1" not in done.stderr


def test_catalog_reads_are_allowed(warehouse):
    assert "estimate" in hindsight(warehouse, "query", "describe agg_metrics", in_process=True).stdout
    assert "agg_metrics" in hindsight(warehouse, "query", "show tables", in_process=True).stdout
    hindsight(warehouse, "query", "describe select * from read_csv('/etc/passwd')", expect=2, in_process=True)


def test_a_read_prints_a_table_or_writes_csv(warehouse, tmp_path):
    out = hindsight(warehouse, "query", "with c as (select cohort, count(*) as n from dim_cases group by cohort) "
                    "select * from c order by cohort", in_process=True).stdout
    assert "cohort  n" in out and "glp1    4" in out and "(2 rows)" in out
    target = tmp_path / "r.csv"
    hindsight(warehouse, "query", "select question_id from dim_questions order by 1", "--csv", target, in_process=True)
    assert len(target.read_text().splitlines()) == 81


def test_export_writes_every_public_mart(warehouse, tmp_path):
    hindsight(warehouse, "export", "--format", "parquet", "--out", tmp_path / "pq", in_process=True)
    files = sorted(p.name for p in (tmp_path / "pq").iterdir())
    assert files == sorted([f"{mart}.parquet" for mart in public_marts()] + ["manifest.json"])
    # the release that wrote them, in the manifest and in each Parquet file's own metadata
    manifest = json.loads((tmp_path / "pq" / "manifest.json").read_text())
    assert manifest["warehouse_version"] == __version__ and manifest["build"]["warehouse_version"] == __version__
    assert {f["mart"] for f in manifest["files"]} == set(public_marts())
    assert next(f["rows"] for f in manifest["files"] if f["mart"] == "dim_questions") == 80
    kv = duckdb.connect().execute("select value from parquet_kv_metadata(?) where key = 'warehouse_version'",
                                  [str(tmp_path / "pq" / "dim_cases.parquet")]).fetchone()
    assert kv[0].decode() == __version__
    rows = duckdb.connect().execute(f"select count(*) from read_parquet('{tmp_path / 'pq' / 'agg_metrics.parquet'}')").fetchone()[0]
    assert rows == duckdb.connect(str(warehouse), read_only=True).execute("select count(*) from agg_metrics").fetchone()[0]
    hindsight(warehouse, "export", "--format", "csv", "--out", tmp_path / "csv", in_process=True)
    assert (tmp_path / "csv" / "dim_questions.csv").read_text().startswith("question_id,case_id,cohort")


def test_a_bi_tool_reads_the_marts_through_sqlalchemy(warehouse):
    # the serving file the build published, never the warehouse a build holds (test_serving.py)
    engine = create_engine(f"duckdb:///{serve_path(warehouse)}", connect_args={"read_only": True})
    with engine.connect() as connection:
        rows = connection.execute(text("""
            select cohort, model, condition, format, metric, round(estimate, 3) as estimate, ci_low, ci_high
            from agg_metrics_by_format
            where visibility = 'paired' and metric = 'delta_htr'
            order by cohort, condition, format""")).fetchall()
    assert rows and {r.cohort for r in rows} == {"glp1", "sepsis"} and {r.condition for r in rows} == {"2.1", "2.2"}
    assert all(r.ci_low <= r.estimate + 1e-3 <= r.ci_high + 2e-3 for r in rows)


def test_dbt_docs_build_offline_with_marts_and_the_runner_exposure(tmp_path):
    import json
    import os
    import subprocess
    import sys

    from conftest import PROJECT

    db = new_warehouse(tmp_path)
    with connect(db):
        pass
    dbt = os.path.join(os.path.dirname(sys.executable), "dbt")
    done = subprocess.run([dbt, "docs", "generate", "--static"], cwd=PROJECT, capture_output=True, text=True,
                          env=cli_env(db))
    assert done.returncode == 0, done.stdout[-3000:]
    page = (dbt_target(db) / "static_index.html").read_text()
    manifest = json.loads((dbt_target(db) / "manifest.json").read_text())
    assert "exposure.hindsight.answer_runner" in manifest["exposures"]
    for mart in ("agg_metrics", "fct_answer_requests", "agg_hb_audit_rows"):
        assert mart in page
