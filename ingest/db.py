"""Warehouse file location, connections and locking; the raw schema the loaders append to is
created from its declaration (ingest/config.py).

DuckDB allows one writing process per file, so every command opens the
warehouse briefly, does its work in one transaction and closes it again.
"""
from __future__ import annotations

import os
import re
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import duckdb
import pyarrow as pa

from ingest.config import IS_CHECKOUT, PROJECT_DIR, raw_ddl
from ingest.errors import InputError


def warehouse_path() -> Path:
    """The warehouse named by HINDSIGHT_DB (relative to the working directory), else warehouse.duckdb
    in a checkout's root, or in the working directory for an installed package."""
    value = os.environ.get("HINDSIGHT_DB")
    if value:
        return Path(value).expanduser().resolve()
    return (PROJECT_DIR if IS_CHECKOUT else Path.cwd().resolve()) / "warehouse.duckdb"


def dbt_write_paths(warehouse: Path, engine: str = "duckdb") -> dict[str, str]:
    """Where dbt writes its target/ and logs/ (DBT_TARGET_PATH, DBT_LOG_PATH; what the user set wins).
    A checkout: dbt's own, as for a plain `dbt build` there (Spark's in target/spark, its partial parse
    differs). An installed package, whose project is read-only in site-packages: <warehouse>.cache/dbt/."""
    if IS_CHECKOUT:
        paths = {"DBT_TARGET_PATH": str(PROJECT_DIR / "target" / "spark")} if engine == "spark" else {}
    else:
        base = Path(f"{warehouse}.cache") / "dbt"
        paths = {"DBT_TARGET_PATH": str(base / ("target-spark" if engine == "spark" else "target")),
                 "DBT_LOG_PATH": str(base / "logs")}
    return {name: os.environ.get(name) or value for name, value in paths.items()}


SERVE_ENV = "HINDSIGHT_SERVE"


def serve_path(warehouse: Path) -> Path:
    """The serving file readers connect to (ingest/serve/snapshots.py): $HINDSIGHT_SERVE, else
    `<warehouse stem>.marts.duckdb` beside the warehouse."""
    value = os.environ.get(SERVE_ENV)
    return Path(value).expanduser().resolve() if value else warehouse.parent / f"{warehouse.stem}.marts.duckdb"


LOCK_WAIT_ENV = "HINDSIGHT_LOCK_WAIT"
LOCK_WAIT_DEFAULT = 10.0
HOLDER = re.compile(r"held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")


def lock_wait() -> float:
    """Seconds to wait for another process to release the warehouse ($HINDSIGHT_LOCK_WAIT, default 10)."""
    value = os.environ.get(LOCK_WAIT_ENV, "")
    try:
        return max(0.0, float(value)) if value.strip() else LOCK_WAIT_DEFAULT
    except ValueError:
        raise InputError(LOCK_WAIT_ENV, f"{value!r} is not a number of seconds", f"set {LOCK_WAIT_ENV}=30, for example") from None


MEMORY_LIMIT_ENV, TEMP_DIR_ENV = "HINDSIGHT_MEMORY_LIMIT", "HINDSIGHT_TEMP_DIR"
DEFAULT_MEMORY_LIMIT = "3GB"


def duckdb_settings() -> dict[str, str]:
    """DuckDB's memory limit and spill directory for every connection (the CLI's and dbt's, through
    profiles.yml): a build larger than memory spills to disk instead of failing or taking the machine.
    HINDSIGHT_MEMORY_LIMIT (default 3GB) and HINDSIGHT_TEMP_DIR (default: DuckDB's, beside the file)."""
    settings = {"memory_limit": os.environ.get(MEMORY_LIMIT_ENV) or DEFAULT_MEMORY_LIMIT, "preserve_insertion_order": "false"}
    if os.environ.get(TEMP_DIR_ENV):
        settings["temp_directory"] = os.environ[TEMP_DIR_ENV]
    return settings


def in_use(path: Path, error: Exception) -> InputError:
    """The one message for a warehouse another process holds: who holds it, and what to do."""
    found = HOLDER.search(str(error))
    holder = f"{found['program']}, PID {found['pid']}" if found else "another process"
    return InputError(path, f"the warehouse is in use by another process ({holder})",
                      f"close that program (a load, another build, a notebook or BI tool holding the warehouse itself) or "
                      f"wait for it; {LOCK_WAIT_ENV}=SECONDS waits longer (now {lock_wait():g}); readers never need the "
                      f"warehouse: connect them to the published marts, {serve_path(path)}")


def _is_lock_error(error: Exception) -> bool:
    return isinstance(error, duckdb.IOException) and "lock" in str(error).lower()


def open_warehouse(path: Path, read_only: bool = False, config: dict | None = None) -> duckdb.DuckDBPyConnection:
    """duckdb.connect, waiting up to lock_wait() seconds while another process holds the file (DuckDB
    allows one writer, and no reader beside a writer); then one clear error naming the holder."""
    deadline = time.monotonic() + lock_wait()
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=duckdb_settings() if config is None else config)
        except duckdb.IOException as error:
            if not _is_lock_error(error):
                raise
            if time.monotonic() >= deadline:
                raise in_use(path, error) from None
            time.sleep(0.2)


def wait_until_free(path: Path, config: dict | None = None) -> None:
    """Return once this process could open the warehouse for writing (waiting as open_warehouse does):
    dbt's adapter opens it right after, and never waits itself (ingest/serve/dbt_plugin.py)."""
    open_warehouse(path, config=config).close()


def require_warehouse(path: Path) -> None:
    """Raise InputError unless the warehouse file exists (a reader must not create an empty one)."""
    if not path.exists():
        raise InputError(path, "no warehouse file here",
                         "load data (`hindsight load ...`, or `hindsight demo`) and run `hindsight build`, or set HINDSIGHT_DB "
                         "to your warehouse file")


@contextmanager
def connect(path: Path | None = None, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    path = path or warehouse_path()
    if read_only:
        require_warehouse(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = open_warehouse(path, read_only=read_only)
    try:
        if not read_only:
            con.execute(raw_ddl())
        yield con
    finally:
        con.close()


def next_load_id(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("select coalesce(max(load_id), 0) + 1 from raw.loads").fetchall()[0][0]


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list) -> None:
    """Append ROWS (sequences in TABLE's column order) in one statement, through Arrow: executemany
    binds one row at a time, 35 of the 40 s that loading the HindsightBench release's 150 k rows took.
    A column whose Python values Arrow cannot put in one type goes row by row, as before."""
    if not rows:
        return
    columns = list(zip(*rows))
    try:
        incoming = pa.table({f"c{i}": pa.array(values) for i, values in enumerate(columns)})
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        con.executemany(f"insert into {table} values ({', '.join('?' * len(columns))})", rows)
        return
    name = f"incoming_{abs(hash(table))}"
    con.register(name, incoming)
    try:
        con.execute(f"insert into {table} select * from {name}")
    finally:
        con.unregister(name)


def register_run(con: duckdb.DuckDBPyConnection, kind: str, spec: str) -> int:
    """A raw.loads row for one runner command, so what it appends has a load_id like any load."""
    load_id = next_load_id(con)
    con.execute("insert into raw.loads values (?, ?, null, null, null, ?, null, 'loaded', null, null, ?)",
                [load_id, kind, f"hindsight {kind} --model {spec}", datetime.now(timezone.utc).replace(tzinfo=None)])
    return load_id


def require_marts(con: duckdb.DuckDBPyConnection, *names: str) -> None:
    """Raise InputError unless every mart named is built (the runners read their requests from marts)."""
    found = {r[0] for r in con.execute(
        "select table_name from information_schema.tables where table_schema = 'main'").fetchall()}
    missing = set(names) - found
    if missing:
        raise InputError("warehouse", f"marts {', '.join(sorted(missing))} are not built", "run `hindsight build` first")


def fetch_dicts(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict]:
    """The rows of a query as dicts by column name (a requests mart's rows, for rendering prompts)."""
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]
