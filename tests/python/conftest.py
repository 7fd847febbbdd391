"""Shared fixtures: a fresh warehouse per test, the CLI, and the real data."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ingest.cli import main

PROJECT = Path(__file__).resolve().parents[2]
SHARED_DATA = PROJECT.parent / "shared" / "data"
DEMO = PROJECT / "ingest" / "demo_corpus"


@pytest.fixture
def warehouse(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "warehouse.duckdb"
    monkeypatch.setenv("HINDSIGHT_DB", str(path))
    return path


@pytest.fixture
def cli(warehouse):
    runner = CliRunner()

    def invoke(*args: str, expect: int | None = 0):
        result = runner.invoke(main, [str(a) for a in args], catch_exceptions=False)
        if expect is not None:
            assert result.exit_code == expect, result.output
        return result

    return invoke


def query(path: Path, sql: str, params=None) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def scalar(path: Path, sql: str, params=None):
    return query(path, sql, params)[0][0]


def write_jsonl(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def require_shared(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"real data missing at {path}: the suite runs with ../shared/data beside the project")
    return path


def dbt_results() -> list[dict]:
    """Statuses of the last dbt invocation's nodes (target/run_results.json)."""
    data = json.loads((PROJECT / "target" / "run_results.json").read_text())
    return data["results"]


def assert_dbt_passed() -> None:
    """Every node of the last dbt build passed (warn is allowed: data-quality thresholds on user data)."""
    bad = [(r["unique_id"], r["status"]) for r in dbt_results() if r["status"] not in ("success", "pass", "warn", "no-op")]
    assert not bad, bad


def hindsight(db, *args):
    """The CLI in a child process (as a user runs it), on the warehouse `db`, from the project root."""
    env = {**os.environ, "HINDSIGHT_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "ingest.cli", *map(str, args)], env=env,
                          capture_output=True, text=True, cwd=PROJECT)


@pytest.fixture(scope="session")
def demo_warehouse(tmp_path_factory):
    """`hindsight demo` once per session: (warehouse, its output, the report's index.html)."""
    folder = tmp_path_factory.mktemp("demo")
    db, reports = folder / "warehouse.duckdb", folder / "reports"
    done = hindsight(db, "demo", "--report-dir", reports)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    assert_dbt_passed()
    return db, done.stdout, reports / "index.html"
