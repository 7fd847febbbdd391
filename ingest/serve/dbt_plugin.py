"""The project's dbt-duckdb plugin (profiles.yml `plugins:`), so that plain `dbt build` behaves as
`hindsight build` does:

- before dbt opens the warehouse it waits, as every hindsight command does, up to
  $HINDSIGHT_LOCK_WAIT seconds for another writer (a load, another build) to let it go, then
  fails with the message that names the holder, instead of DuckDB's bare lock error at once;
- it gives dbt's connection the functions the on-run-end hook publishes a snapshot with
  (macros/publish_snapshot.sql; ingest/serve/snapshots.py): the hook writes the Parquet files through
  dbt's own connection, these do the file-system steps (a mart
  the run left unchanged is linked from the snapshot before).
"""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
from dbt.adapters.duckdb.plugins import BasePlugin
from dbt_common.exceptions import DbtRuntimeError

from ingest.db import wait_until_free
from ingest.errors import InputError
from ingest.serve import snapshots


class Plugin(BasePlugin):
    def update_connection_config(self, creds, config) -> None:
        if creds.path and creds.path != ":memory:":
            try:
                wait_until_free(Path(creds.path), config)
            except InputError as error:        # dbt says a runtime error in one line, anything else with a traceback
                raise DbtRuntimeError(str(error)) from None

    def configure_connection(self, conn: duckdb.DuckDBPyConnection) -> None:
        warehouse = Path(self.creds.path).resolve()

        def begin(snapshot_id: str) -> str:
            return snapshots.begin(warehouse, snapshot_id)

        def commit(staging: str, snapshot_id: str, columns: str, seconds: str) -> str:
            return str(snapshots.commit(warehouse, Path(staging), snapshot_id, json.loads(columns), json.loads(seconds)))

        def reuse(staging: str, snapshot_id: str, mart: str, columns: str) -> bool:
            return snapshots.reuse(warehouse, Path(staging), snapshot_id, mart, json.loads(columns))

        def reuse_partitions(staging: str, snapshot_id: str, mart: str, columns: str, column: str, signatures: str) -> str:
            return json.dumps(snapshots.reuse_partitions(warehouse, Path(staging), snapshot_id, mart, json.loads(columns),
                                                         column, json.loads(signatures)))

        for name, function, arity, returns in (("hindsight_snapshot_begin", begin, 1, "VARCHAR"),
                                               ("hindsight_snapshot_commit", commit, 4, "VARCHAR"),
                                               ("hindsight_snapshot_reuse", reuse, 4, "BOOLEAN"),
                                               ("hindsight_snapshot_reuse_partitions", reuse_partitions, 6, "VARCHAR")):
            conn.create_function(name, function, ["VARCHAR"] * arity, returns, side_effects=True)
