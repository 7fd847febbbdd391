"""`hindsight build` brings in what the runs stored since the last build, exactly once.

It reads the runs' store in one read transaction (a consistent cut, while runs go on appending:
their later rows wait for the next build) and writes into the warehouse's raw tables, in one
transaction with the marks of how far it read (raw.store_ingests): a build killed half-way brings
in nothing and marks nothing, and the next one brings all of it in. What a run stored comes in under
a load of the warehouse's own, a new one each build (raw.store_loads keeps which run's load it was):
the incremental models add the rows of the loads above their mark, so the rows of a run still going
that a later build brings in are never skipped. Batches and registry rows, which runs update in
place, are brought in whole, by key.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa

from ingest.collect import store
from ingest.db import insert_rows, next_load_id

CHUNK = 20_000


@dataclass
class Brought:
    rows: dict[str, int] = field(default_factory=dict)     # per table
    running: int = 0                                      # runs still going when it read

    @property
    def calls(self) -> int:
        return self.rows.get("llm_calls", 0)


def marks(con, store_id: str, history: dict[str, int]) -> dict[str, int]:
    """How far the warehouse has read each table of the store (the history copied at its making
    counts as read)."""
    read = dict(con.execute("select table_name, max(through_row) from raw.store_ingests where store_id = ? group by 1",
                            [store_id]).fetchall())
    return {table: max(read.get(table, 0), history.get(table, 0)) for table in store.MIRRORED}


def history_marks(raw) -> dict[str, int]:
    return {key.split(":", 1)[1]: int(value) for key, value in raw.execute(
        "select key, value from meta where key like 'history:%'").fetchall()}


def pending(con, warehouse: Path) -> dict[str, int] | None:
    """Rows of each table the runs stored that no build has brought in yet (None: no store)."""
    with store.reading(warehouse) as raw:
        if raw is None:
            return None
        through = marks(con, store.store_id(raw), history_marks(raw))
        return {table: raw.execute(f"select count(*) from raw_{table} where rowid > ?", [through[table]]).fetchone()[0]
                for table in store.MIRRORED if table not in store.MUTABLE}


def ingest(con, warehouse: Path) -> Brought | None:
    """Bring the store's new rows into the warehouse open as CON (see the module's docstring)."""
    path = store.store_path(warehouse)
    if not path.exists():
        return None
    raw = store.connect(path)
    brought = Brought()
    try:
        raw.execute("begin")           # one read transaction: every table as of one moment
        sid = store.store_id(raw)
        through = marks(con, sid, history_marks(raw))
        # runs still beating (a run killed with kill -9 still says running, but has stopped beating)
        fresh = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(seconds=store.claim_seconds())
        brought.running = raw.execute("select count(*) from runs where state = 'running' and heartbeat_at > ?",
                                      [fresh]).fetchone()[0]
        columns = store.raw_columns()
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        con.execute("begin transaction")
        try:
            loads = Loads(con, raw, sid)
            for table in store.MIRRORED:
                names = [name for name, _ in columns[table]]
                if table in store.MUTABLE:
                    brought.rows[table] = _replace_by_key(con, raw, table, names)
                    continue
                high, n = through[table], 0
                cursor = raw.execute(f"select rowid, {', '.join(names)} from raw_{table} where rowid > ? "
                                     "order by rowid", [through[table]])
                while rows := cursor.fetchmany(CHUNK):
                    high = rows[-1][0]
                    if table == "loads":        # a run's registration: its rows come in under loads of their own
                        continue
                    values = [list(row[1:]) for row in rows]
                    if "load_id" in names:
                        loads.assign(values, names.index("load_id"))
                    insert_rows(con, f"raw.{table}", values)
                    n += len(values)
                if high > through[table]:
                    con.execute("insert into raw.store_ingests values (?, ?, ?, ?, ?)", [sid, table, high, n, now])
                brought.rows[table] = n
            brought.rows["loads"] = loads.made
            con.execute("commit")
        except BaseException:
            con.execute("rollback")
            raise
        raw.execute("commit")
    finally:
        raw.close()
    return brought


class Loads:
    """The warehouse loads a build brings a run's rows in under: one per run's load and build, with a
    load id above every other (the incremental models take the rows of the loads above their mark, so
    a run's rows that come in over several builds come in under several loads)."""

    def __init__(self, con, raw, store_id: str):
        self.con, self.raw, self.store_id = con, raw, store_id
        self.mapped: dict[int, int] = {}
        self.made = 0

    def assign(self, rows: list[list], at: int) -> None:
        counts: dict[int, int] = {}
        for row in rows:
            counts[row[at]] = counts.get(row[at], 0) + 1
        for run_load, n in counts.items():
            if run_load not in self.mapped:
                self.mapped[run_load] = self._new(run_load, n)
        for row in rows:
            row[at] = self.mapped[row[at]]

    def _new(self, run_load: int, n: int) -> int:
        registered = self.raw.execute("select * from raw_loads where load_id = ? order by rowid limit 1", [run_load]).fetchone()
        load_id = next_load_id(self.con)
        row = list(registered) if registered else [None, "answer", None, None, None, "hindsight (a run)", None, "loaded",
                                                   None, None, datetime.now(timezone.utc).replace(tzinfo=None)]
        row[0], row[9], row[10] = load_id, n, datetime.now(timezone.utc).replace(tzinfo=None)
        insert_rows(self.con, "raw.loads", [row])
        self.con.execute("insert into raw.store_loads values (?, ?, ?)", [self.store_id, run_load, load_id])
        self.made += 1
        return load_id


def _replace_by_key(con, raw, table: str, names: list[str]) -> int:
    """TABLE's rows as the store has them now, over the warehouse's rows of the same keys."""
    key = store.MIRRORED[table]
    rows = [list(row) for row in raw.execute(f"select {', '.join(names)} from raw_{table}").fetchall()]
    if not rows:
        return 0
    keys = pa.table({k: pa.array([row[names.index(k)] for row in rows]) for k in key})
    con.register("store_keys", keys)
    try:
        con.execute(f"delete from raw.{table} as t using store_keys as k where "
                    + " and ".join(f"t.{k} = k.{k}" for k in key))
    finally:
        con.unregister("store_keys")
    insert_rows(con, f"raw.{table}", rows)
    return len(rows)
