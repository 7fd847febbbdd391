"""`hindsight build`: dbt build on the warehouse named by HINDSIGHT_DB.

dbt runs in a child process: it holds its own DuckDB connection for the whole
build, and DuckDB allows one writing process per file, so the CLI closes its
connection first and opens the file again only after dbt has exited.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ingest.db import PROJECT_DIR, connect, warehouse_path


def dbt_executable() -> str:
    beside = Path(sys.executable).parent / "dbt"
    found = str(beside) if beside.exists() else shutil.which("dbt")
    if not found:
        raise RuntimeError("dbt is not installed in this environment; run `make install`")
    return found


def run_dbt(args: list[str], db: Path | None = None) -> bool:
    """Run a dbt command against the warehouse. True on success."""
    db = db or warehouse_path()
    with connect(db):
        pass  # create the raw tables, empty, so dbt finds every source
    env = dict(os.environ, HINDSIGHT_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    command = [dbt_executable(), *args, "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR)]
    return subprocess.run(command, env=env, cwd=PROJECT_DIR).returncode == 0


def build(db: Path | None = None, extra: list[str] | None = None) -> bool:
    return run_dbt(["build", *(extra or [])], db)
