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


# the incremental tables' shape: one built by an older version lacks the column (incremental builds
# only append new rows, so a column every row needs comes with a rebuild from scratch)
INCREMENTAL_FACTS = {("main", "fct_answer_pairs"): "scored_at", ("intermediate", "int_answers_scored"): "is_latest_in_cell",
                     ("intermediate", "int_metric_case_sums"): "keyed_by", ("intermediate", "int_metric_estimates"): "scored_through",
                     ("intermediate", "int_metric_estimates_by_eval_target"): "scored_through"}


def needs_full_refresh(con) -> list[str]:
    """The incremental tables whose stored shape predates this version: rebuilt from scratch once."""
    columns = set(con.execute("select table_schema, table_name, column_name from information_schema.columns").fetchall())
    tables = {(schema, table) for schema, table, _ in columns}
    return [table for (schema, table), column in INCREMENTAL_FACTS.items()
            if (schema, table) in tables and (schema, table, column) not in columns]


def run_dbt(args: list[str], db: Path | None = None) -> bool:
    """Run a dbt command against the warehouse. True on success."""
    db = db or warehouse_path()
    with connect(db) as con:
        # create the raw tables, empty, so dbt finds every source
        stale = needs_full_refresh(con) if args and args[0] in ("build", "run") else []
    if stale and "--full-refresh" not in args:
        print(f"hindsight: {', '.join(stale)} were built by an older version of the models; rebuilding them from scratch once (--full-refresh)",
              file=sys.stderr)
        args = [*args, "--full-refresh"]
    env = dict(os.environ, HINDSIGHT_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    command = [dbt_executable(), *args, "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR)]
    return subprocess.run(command, env=env, cwd=PROJECT_DIR).returncode == 0


def build(db: Path | None = None, extra: list[str] | None = None) -> bool:
    return run_dbt(["build", *(extra or [])], db)
