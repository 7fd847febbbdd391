"""The published snapshot the explorer reads, one build per page.

Each snapshot gets an in-memory DuckDB database of its own holding a view per public mart over that
snapshot's files (ingest/serve/snapshots.serving_views, pinned). Views in an in-memory database's
main schema are seen by every cursor of it, so each request reads through a cursor of its own: every
query of a page reads one build, and a publish (or a killed build, which publishes nothing) never
changes a page half-way. A request after a publish reads the new snapshot: the pointer is read per
request, a new database made once per snapshot id. The engine may read the snapshots' folder and
nothing else (external access off, the setting locked), and the databases are read-only by nature:
nothing a view reads can be written through them.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from ingest.db import duckdb_settings
from ingest.errors import InputError
from ingest.serve.snapshots import current, serving_views, snapshots_root

KEPT = 2          # the snapshot now and the one before (pages still reading it finish on it)


SLICES_KEPT = 64  # slices remembered per snapshot (a few KB each)
_request = threading.local()   # the cursors of the request this thread serves, and its time limit


class TimedOut(Exception):
    """A page's queries ran past its time limit and were interrupted."""


@contextmanager
def time_limit(seconds: float):
    """Every cursor a Pinned hands out in this thread meanwhile is interrupted SECONDS after the start
    (a page's queries share one limit, whichever view reads them); TimedOut says it happened."""
    cursors: list = []
    stopped = threading.Event()

    def stop():
        stopped.set()
        for cursor in list(cursors):
            try:
                cursor.interrupt()
            except duckdb.Error:
                pass

    timer = threading.Timer(seconds, stop)
    timer.daemon = True
    _request.cursors, _request.stopped = cursors, stopped
    timer.start()
    try:
        yield
    except duckdb.InterruptException:
        raise TimedOut(seconds) from None
    finally:
        timer.cancel()
        _request.cursors = _request.stopped = None


@dataclass
class Pinned:
    id: str
    con: duckdb.DuckDBPyConnection
    build: dict
    slices: OrderedDict = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor of its own for this request, under the request's time limit (time_limit)."""
        cursor = self.con.cursor()
        if getattr(_request, "cursors", None) is not None:
            if _request.stopped.is_set():
                raise TimedOut("the page's time limit")
            _request.cursors.append(cursor)
        return cursor

    def slice(self, key: tuple, compute):
        """COMPUTE()'s slice, once per KEY in this snapshot: a snapshot never changes, so neither does a
        slice of it (going back to the metrics, or on to a cell of them, costs no second pass)."""
        with self.lock:
            if key in self.slices:
                self.slices.move_to_end(key)
                return self.slices[key]
        frame = compute()                # outside the lock: other pages go on meanwhile
        with self.lock:
            self.slices[key] = frame
            while len(self.slices) > SLICES_KEPT:
                self.slices.popitem(last=False)
        return frame

    def remembered(self, wanted) -> list:
        """The slices already made whose key WANTED accepts, oldest first."""
        with self.lock:
            return [frame for key, frame in self.slices.items() if wanted(key)]


def records(cur, sql: str, params: list | None = None) -> list[dict]:
    """SQL's rows as dicts by column name."""
    cursor = cur.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def has_mart(cur, name: str) -> bool:
    """Whether the snapshot holds mart NAME (one published before the mart existed does not)."""
    return cur.execute("select count(*) from duckdb_views() where view_name = ?", [name]).fetchone()[0] > 0


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Marts:
    """The current snapshot of WAREHOUSE's marts, as Pinned databases made on first use."""

    def __init__(self, warehouse: Path):
        self.warehouse = warehouse
        self._pinned: dict[str, Pinned] = {}
        self._lock = threading.Lock()

    def now(self) -> Pinned:
        snapshot = current(self.warehouse)
        if snapshot is None:
            raise InputError(self.warehouse, "no published snapshot of the marts yet",
                             "run `hindsight build` (every successful build publishes one), or `hindsight demo`")
        with self._lock:
            pinned = self._pinned.get(snapshot.id)
            if pinned is None:
                pinned = self._pinned[snapshot.id] = self._open(snapshot)
                for old in list(self._pinned)[:-KEPT]:
                    self._pinned.pop(old)        # closed when the last cursor reading it is gone
            return pinned

    def _open(self, snapshot) -> Pinned:
        con = duckdb.connect(":memory:", config=duckdb_settings())
        for mart, sql in serving_views(self.warehouse, snapshot.manifest["marts"], pinned=snapshot.id).items():
            con.execute(f'create view "{mart}" as {sql}')
        root = str(snapshots_root(self.warehouse)) + os.sep
        con.execute(f"set allowed_directories = [{_literal(root)}]")
        con.execute("set enable_external_access = false")
        con.execute("set lock_configuration = true")
        cursor = con.execute("select * from dim_build")
        row = cursor.fetchone()
        build = dict(zip([d[0] for d in cursor.description], row)) if row else {}
        return Pinned(snapshot.id, con, build)
