"""`hindsight build`: dbt build on the warehouse named by HINDSIGHT_DB."""
from __future__ import annotations

import os
from pathlib import Path

from ingest.db import PROJECT_DIR, connect, warehouse_path


def run_dbt(args: list[str], db: Path | None = None) -> bool:
    """Run a dbt command in-process against the warehouse. True on success."""
    from dbt.cli.main import dbtRunner

    db = db or warehouse_path()
    with connect(db):
        pass  # create the raw tables, empty, so dbt finds every source
    os.environ["HINDSIGHT_DB"] = str(db)
    os.environ.setdefault("DO_NOT_TRACK", "1")
    result = dbtRunner().invoke(
        [*args, "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR)]
    )
    return bool(result.success)


def build(db: Path | None = None, extra: list[str] | None = None) -> bool:
    return run_dbt(["build", *(extra or [])], db)
