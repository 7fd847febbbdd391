"""Bounded memory (ingest/db.py duckdb_settings, profiles.yml): every DuckDB connection of a build,
dbt's and the CLI's, runs under HINDSIGHT_MEMORY_LIMIT and spills to HINDSIGHT_TEMP_DIR, so a build
larger than memory spills to disk instead of failing or taking the machine."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import PROJECT, cli_env, new_warehouse
from ingest.db import DEFAULT_MEMORY_LIMIT, open_warehouse


def as_duckdb_reports(limit: str) -> str:
    """DuckDB shows a memory limit in MiB: what it shows for LIMIT."""
    with duckdb.connect(config={"memory_limit": limit}) as con:
        return con.execute("select current_setting('memory_limit')").fetchone()[0]


def dbt_settings(db: Path, env: dict) -> dict:
    """The memory limit and spill directory of dbt's connection to DB under ENV (the profile's)."""
    run = subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), "show", "--quiet", "--output", "json", "--inline",
         "select current_setting('memory_limit') as memory_limit, current_setting('temp_directory') as temp_directory"],
        env=env, capture_output=True, text=True, cwd=PROJECT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(run.stdout[run.stdout.index("{"):])["show"][0]


def test_dbt_connects_with_the_memory_limit_and_spill_directory_of_the_environment(tmp_path):
    db = new_warehouse(tmp_path)
    spill = tmp_path / "spill"
    told = cli_env(db, {"HINDSIGHT_MEMORY_LIMIT": "700MB", "HINDSIGHT_TEMP_DIR": str(spill)})
    assert dbt_settings(db, told) == {"memory_limit": as_duckdb_reports("700MB"), "temp_directory": str(spill)}
    # unset, the profile's defaults are the CLI's (written twice: profiles.yml cannot import ingest.db)
    untold = {k: v for k, v in cli_env(db).items() if k not in ("HINDSIGHT_MEMORY_LIMIT", "HINDSIGHT_TEMP_DIR")}
    assert dbt_settings(db, untold) == {"memory_limit": as_duckdb_reports(DEFAULT_MEMORY_LIMIT), "temp_directory": f"{db}.tmp"}


def test_the_cli_defaults_to_3gb_and_a_spill_directory_beside_the_warehouse(tmp_path, monkeypatch):
    monkeypatch.delenv("HINDSIGHT_MEMORY_LIMIT", raising=False)
    monkeypatch.delenv("HINDSIGHT_TEMP_DIR", raising=False)
    db = new_warehouse(tmp_path)
    with open_warehouse(db) as con:
        limit, temp = con.execute("select current_setting('memory_limit'), current_setting('temp_directory')").fetchone()
    assert limit == as_duckdb_reports("3GB") == as_duckdb_reports(DEFAULT_MEMORY_LIMIT)
    assert Path(temp) == Path(f"{db}.tmp")


# a group by of 3 M string keys holds ~170 MB of hash table: under a 64 MB limit it must spill
LARGER_THAN_64MB = """
    select count(*), sum(n)
    from (select 'key-' || (range * 7919 % 3000000) as k, count(*) as n from range(6000000) group by k)"""


def test_a_query_larger_than_the_memory_limit_spills_to_the_temp_directory_and_completes(tmp_path, monkeypatch):
    monkeypatch.setenv("HINDSIGHT_MEMORY_LIMIT", "64MB")
    monkeypatch.setenv("HINDSIGHT_TEMP_DIR", str(tmp_path / "spill"))
    profile = tmp_path / "profile.json"
    with open_warehouse(new_warehouse(tmp_path)) as con:
        con.execute(f"pragma enable_profiling = 'json'; pragma profiling_output = '{profile}'")
        groups, rows = con.execute(LARGER_THAN_64MB).fetchone()
        con.execute("pragma disable_profiling")
    assert (groups, rows) == (3_000_000, 6_000_000)
    system = json.loads(profile.read_text())["system"]
    assert system["peak_buffer_memory"] <= 64_000_000
    assert system["total_bytes_spilled"] > 64_000_000, system
    # and it spills where it was told: a directory that cannot be made fails the query, naming it
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("HINDSIGHT_TEMP_DIR", str(tmp_path / "a-file" / "spill"))
    with open_warehouse(new_warehouse(tmp_path, "other")) as con, pytest.raises(duckdb.IOException, match="a-file/spill"):
        con.execute(LARGER_THAN_64MB).fetchone()
