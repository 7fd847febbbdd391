"""What a run reads and writes through, instead of the warehouse: one connection-like object whose
statements on the raw tables go to the runs' store (SQLite, ingest/collect/store.py) and whose
every other statement reads the published snapshot of the marts, with the project's seeds as
`reference.*` (an in-memory DuckDB over the snapshot's files: a build never waits for it, nor it
for a build).

The runners keep their SQL: `insert into raw.responses …` lands in the store's `raw_responses`,
`select … from fct_answer_requests` reads the snapshot. A statement reads one side or the other,
never both (a run reads its requests from the marts, then what it has stored from the store).
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ingest.collect import store
from ingest.config import PROJECT_DIR
from ingest.db import duckdb_settings, warehouse_path
from ingest.errors import InputError

RAW = re.compile(r"\braw\.")
INTERMEDIATE = re.compile(r"\bintermediate\.|'intermediate'")
SEEDS = ("sampling_profiles", "model_capabilities", "model_prices", "prompt_variants", "conditions", "hb_registry")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def snapshot_marts(warehouse: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with a view per public mart of the current snapshot, and the seeds."""
    from ingest.serve.snapshots import current, serving_views

    snapshot = current(warehouse)
    if snapshot is None:
        return _warehouse_marts(warehouse)
    con = duckdb.connect(":memory:", config=duckdb_settings())
    for mart, sql in serving_views(warehouse, snapshot.manifest["marts"], pinned=snapshot.id).items():
        con.execute(f'create view "{mart}" as {sql}')
    add_seeds(con)
    return con


def _warehouse_marts(warehouse: Path) -> duckdb.DuckDBPyConnection:
    """No snapshot to read (a build with HINDSIGHT_PUBLISH=off, or none yet): the warehouse itself,
    read-only, for the run's length, as 1.0.0 read it (builds and loads wait for the run meanwhile)."""
    import sys

    from ingest.db import open_warehouse

    if not warehouse.exists():
        raise InputError(warehouse, "no warehouse file here",
                         "load data (`hindsight load ...`, or `hindsight demo`) and run `hindsight build` first")
    print(f"hindsight: no published snapshot of {warehouse.name}: reading the requests from the warehouse itself, so "
          "builds and loads wait for this run (publish snapshots, HINDSIGHT_PUBLISH=on, to build while runs go on)",
          file=sys.stderr)
    return open_warehouse(warehouse, read_only=True)


def add_seeds(con: duckdb.DuckDBPyConnection) -> None:
    """The project's seeds a run reads (sampling profiles, capabilities, prices…) as reference.*."""
    con.execute("create schema if not exists reference")
    for seed in SEEDS:
        path = PROJECT_DIR / "seeds" / f"{seed}.csv"
        if path.exists():
            con.execute(f"create view reference.{seed} as select * from read_csv({_quote(str(path))}, header = true)")


class Rows:
    """Rows already read, as a cursor gives them."""

    def __init__(self, description, rows: list):
        self.description, self._rows = description, list(rows)

    def fetchall(self):
        rows, self._rows = self._rows, []
        return rows

    def fetchone(self):
        return self._rows.pop(0) if self._rows else None


class RunConnection:
    """The store for `raw.*`, the snapshot for the rest (see the module's docstring)."""

    def __init__(self, warehouse: Path, run: store.Run | None = None, marts: duckdb.DuckDBPyConnection | None = None):
        self.warehouse, self.run = warehouse, run
        self.path = store.ensure_store(warehouse)
        self.raw = store.connect(self.path)
        self._marts = marts

    @property
    def marts(self) -> duckdb.DuckDBPyConnection:
        if self._marts is None:
            self._marts = snapshot_marts(self.warehouse)
        return self._marts

    def execute(self, sql: str, params=None):
        params = list(params or [])
        if INTERMEDIATE.search(sql):
            return self._warehouse(sql, params)
        if RAW.search(sql):
            return self.raw.execute(_sqlite(sql), params)
        if sql.strip().lower() in ("begin transaction", "commit", "rollback"):
            return self.raw.execute(_sqlite(sql))
        return self.marts.execute(sql, params)

    def _warehouse(self, sql: str, params: list) -> Rows:
        """A model the snapshot does not publish (a simulator's hidden truth, int_hb_dates): read from
        the warehouse itself, briefly (a simulated run is a demo's, not hours of calls)."""
        from ingest.db import open_warehouse, require_warehouse

        require_warehouse(self.warehouse)
        con = open_warehouse(self.warehouse, read_only=True)
        try:
            cursor = con.execute(sql, params)
            return Rows(cursor.description, cursor.fetchall())
        finally:
            con.close()

    def executemany(self, sql: str, rows) -> None:
        if not RAW.search(sql):
            raise AssertionError(f"a run writes only raw tables: {sql[:80]}")
        self.raw.executemany(_sqlite(sql), [list(row) for row in rows])

    def stored(self, records: list[dict]) -> None:
        """In the writer's transaction: the stored calls' claims freed, the run's counts moved on."""
        if self.run is None:
            return
        self.raw.executemany("delete from claims where call_id = ?", [[r["call_id"]] for r in records])
        done = sum(r["status"] != "error" for r in records)
        self.raw.execute("update runs set done = done + ?, failed = failed + ?, input_tokens = input_tokens + ?, "
                         "output_tokens = output_tokens + ?, heartbeat_at = ? where run_id = ?",
                         [done, len(records) - done, sum(r["input_tokens"] or 0 for r in records),
                          sum(r["output_tokens"] or 0 for r in records), store._now(), self.run.id])

    def cursor(self) -> RunConnection:
        """Another connection to both sides, for another thread (the runner's writer)."""
        return RunConnection(self.warehouse, self.run, self.marts.cursor())

    def release_marts(self) -> None:
        """Done reading the marts: close them (the warehouse itself, where no snapshot was published,
        which the command may then open for writing)."""
        if self._marts is not None:
            self._marts.close()
            self._marts = None

    def close(self) -> None:
        self.raw.close()
        if self._marts is not None:
            self._marts.close()


def _sqlite(sql: str) -> str:
    """A statement on the raw tables as the store names them; `begin` takes the write lock at once
    (two runs never find each other's locks half-way)."""
    sql = RAW.sub("raw_", sql)
    return "begin immediate" if sql.strip().lower() == "begin transaction" else sql


@contextmanager
def run_connection(command: str, model: str, argv: list[str] | None = None, warehouse: Path | None = None,
                   record: bool = True):
    """A run of COMMAND for MODEL: registered in the store, beating while it runs, ended with its
    state (finished, failed, interrupted); a connection to the store and the snapshot. A command that
    sends no call (an audit's plan or inspection, a batch's cancel) is not recorded as a run."""
    warehouse = warehouse or warehouse_path()
    con = RunConnection(warehouse)
    if not record:
        try:
            yield con
        finally:
            con.close()
        return
    con.run = store.Run(con.path, command, model, argv)
    try:
        yield con
    except KeyboardInterrupt:
        con.run.finish("interrupted", "stopped by an interrupt: the next run resumes")
        con.close()
        raise
    except BaseException as error:
        con.run.finish("failed", f"{type(error).__name__}: {error}"[:500])
        con.close()
        raise
    con.run.finish("finished")
    con.close()
