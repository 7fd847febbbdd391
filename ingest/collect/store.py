"""The runs' store: where every run of `hindsight answer`, `judge`, `generate`, `audit` and the batch
path writes its calls while it runs, so that no run holds the warehouse.

One SQLite file in WAL mode beside the warehouse (`<warehouse stem>.calls.sqlite`): many processes
append to it at once, each result in a transaction of its own (a run killed at any point loses
nothing it stored, and nothing half), and any number read it meanwhile (`hindsight status`, a
build). It holds, under the raw tables' own names and columns (`raw.llm_calls` is `raw_llm_calls`
here), what the runs write: the ledger, answers, narratives, judgments, HindsightBench replies,
batches and the loads that register them; beside them the runs (one row per process: its progress,
heartbeat and end) and the claims (a call a run is sending, so that no other run sends it too; a
claim expires when its run stops beating, and is freed at once when its process is gone).

`hindsight build` brings in what was stored since the last build (ingest/collect/ingest.py),
exactly once: it remembers, in the warehouse and in the same transaction, how far it read each
table. A store made beside a warehouse of 1.0.0 starts from a copy of what that warehouse's runs
wrote (its ledger among them): those calls count as stored and are never asked again, nor brought
in twice.
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from contextlib import contextmanager
from datetime import date, datetime, timezone
from functools import lru_cache
from pathlib import Path

import duckdb

from ingest.config import raw_ddl
from ingest.errors import InputError

SUFFIX = ".calls.sqlite"
# the raw tables the runs write, each with the columns that name one row of it (merging two stores)
MIRRORED: dict[str, tuple[str, ...]] = {
    "loads": ("load_id",), "llm_calls": ("call_id",), "responses": ("response_id",),
    "synthetic_narratives": ("narrative_request_id", "model"), "judgments": ("judgment_id",),
    "hb_responses": ("call_id",), "batches": ("batch_key",), "batch_calls": ("batch_key", "call_id"),
    "hb_registry": ("model_key", "row_version"), "hb_inspections": ("model_key", "inspected_at")}
# tables whose rows a run updates in place (a batch moves through its states): a build brings them in
# whole, by key, rather than from where it stopped
MUTABLE = ("batches", "batch_calls", "hb_registry")
# of a 1.0.0 warehouse, what its runs wrote (the rest of those tables came from loads, which stay there)
HISTORY = {"responses": "load_id in (select load_id from raw.loads where kind in ('answer', 'inspect'))",
           "hb_responses": "source = 'runner'"}
INDEXED = {"llm_calls": ("call_id", "status"), "responses": ("model",), "hb_responses": ("model_key",),
           "batch_calls": ("batch_key",), "judgments": ("judge_model",)}
CLAIM_ENV = "HINDSIGHT_CLAIM_SECONDS"
DEFAULT_CLAIM_SECONDS = 60.0
HOST = socket.gethostname()


def store_path(warehouse: Path) -> Path:
    return warehouse.parent / f"{warehouse.stem}{SUFFIX}"


def claim_seconds() -> float:
    """How long a claim lasts without its run's heartbeat ($HINDSIGHT_CLAIM_SECONDS, default 60)."""
    value = os.environ.get(CLAIM_ENV, "").strip()
    try:
        return max(1.0, float(value)) if value else DEFAULT_CLAIM_SECONDS
    except ValueError:
        raise InputError(CLAIM_ENV, f"{value!r} is not a number of seconds", f"set {CLAIM_ENV}=60, for example") from None


# SQLite keeps a timestamp as text; these read it back as the datetime DuckDB gives (its declared type)
sqlite3.register_adapter(datetime, lambda value: value.isoformat(sep=" "))
sqlite3.register_adapter(date, lambda value: value.isoformat())
sqlite3.register_converter("TIMESTAMP", lambda raw: datetime.fromisoformat(raw.decode()))
sqlite3.register_converter("DATE", lambda raw: date.fromisoformat(raw.decode()))
sqlite3.register_converter("BOOLEAN", lambda raw: raw not in (b"0", b""))
SQLITE_TYPES = {"TIMESTAMP": "TIMESTAMP", "DATE": "DATE", "BOOLEAN": "BOOLEAN", "INTEGER": "INTEGER", "BIGINT": "INTEGER",
                "SMALLINT": "INTEGER", "DOUBLE": "REAL", "FLOAT": "REAL", "DECIMAL": "REAL"}


@lru_cache(maxsize=1)
def raw_columns() -> dict[str, list[tuple[str, str]]]:
    """The mirrored tables' columns (name, DuckDB type) in the raw schema's order."""
    con = duckdb.connect()
    con.execute(raw_ddl())
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in con.execute(
            "select table_name, column_name, data_type from information_schema.columns where table_schema = 'raw' "
            "order by table_name, ordinal_position").fetchall():
        if table in MIRRORED:
            out.setdefault(table, []).append((column, kind))
    con.close()
    return out


def _sqlite_type(kind: str) -> str:
    return SQLITE_TYPES.get(kind.split("(")[0].upper(), "TEXT")


SCHEMA = """
create table if not exists meta (key text primary key, value text);
create table if not exists runs (
    run_id text primary key, command text, purpose text, model text, label text, host text, pid integer, argv text,
    started_at TIMESTAMP, heartbeat_at TIMESTAMP, finished_at TIMESTAMP, state text,
    planned integer default 0, done integer default 0, cached integer default 0, failed integer default 0,
    input_tokens integer default 0, output_tokens integer default 0, duplicates integer default 0, last_error text);
create table if not exists claims (call_id text primary key, run_id text, claimed_at real, expires_at real);
create index if not exists claims_run on claims (run_id);
"""


def connect(path: Path) -> sqlite3.Connection:
    """A connection of this thread's own: autocommit outside `begin`, waiting for another writer."""
    con = sqlite3.connect(str(path), timeout=60, isolation_level=None, check_same_thread=False,
                          detect_types=sqlite3.PARSE_DECLTYPES)
    con.execute("pragma busy_timeout = 60000")
    con.execute("pragma synchronous = normal")      # WAL: a process killed at any point loses no commit
    return con


def _create(path: Path) -> None:
    con = connect(path)
    con.execute("pragma journal_mode = wal")
    con.executescript(SCHEMA)
    for table, columns in raw_columns().items():
        body = ", ".join(f'"{name}" {_sqlite_type(kind)}' for name, kind in columns)
        # the same columns in the same order (a runner's positional insert lands as in the warehouse); a
        # row's rowid is its place in the table (rows are never deleted), which a build's mark remembers
        con.execute(f"create table if not exists raw_{table} ({body})")
    # what a claim looks up before each call, and the keys a writer's dedup reads
    for table, columns in INDEXED.items():
        con.execute(f"create index if not exists raw_{table}_key on raw_{table} ({', '.join(columns)})")
    con.execute("insert or ignore into meta values ('store_id', ?)", [uuid.uuid4().hex])
    con.execute("insert or ignore into meta values ('created_at', ?)", [datetime.now(timezone.utc).isoformat()])
    con.close()


def _copy_history(path: Path, warehouse: Path) -> int:
    """What the runs of a warehouse made before this store wrote, copied in as already brought in."""
    from ingest.db import open_warehouse

    if not warehouse.exists():
        return 0
    source = open_warehouse(warehouse, read_only=True)
    con = connect(path)
    copied = 0
    try:
        present = {name for (name,) in source.execute(
            "select table_name from information_schema.tables where table_schema = 'raw'").fetchall()}
        con.execute("begin immediate")
        for table, columns in raw_columns().items():
            names = [name for name, _ in columns]
            have = {name for (name,) in source.execute(
                "select column_name from information_schema.columns where table_schema = 'raw' and table_name = ?",
                [table]).fetchall()} if table in present else set()
            if not have:
                continue
            chosen = ", ".join(f'"{n}"' if n in have else f'null as "{n}"' for n in names)
            cursor = source.execute(f"select {chosen} from raw.{table} where {HISTORY.get(table, 'true')}")
            while rows := cursor.fetchmany(5000):
                con.executemany(f"insert into raw_{table} ({', '.join(names)}) values ({', '.join('?' * len(names))})",
                                [_plain(row) for row in rows])
                copied += len(rows)
            high = con.execute(f"select coalesce(max(rowid), 0) from raw_{table}").fetchone()[0]
            con.execute("insert or replace into meta values (?, ?)", [f"history:{table}", str(high)])
        con.execute("insert or replace into meta values ('history_from', ?)", [str(warehouse)])
        con.execute("commit")
    finally:
        con.close()
        source.close()
    return copied


def _plain(row) -> list:
    """A DuckDB row as SQLite takes it (a JSON or struct value as its text)."""
    return [json.dumps(v) if isinstance(v, (dict, list)) else v for v in row]


def ensure_store(warehouse: Path) -> Path:
    """The warehouse's store, made once (with a 1.0.0 warehouse's history) under a lock: two runs
    starting together make one."""
    path = store_path(warehouse)
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            building = path.with_name(f"{path.name}.new-{os.getpid()}")
            for leftover in (building, Path(f"{building}-wal"), Path(f"{building}-shm")):
                leftover.unlink(missing_ok=True)
            _create(building)
            _copy_history(building, warehouse)
            checkpoint = connect(building)
            checkpoint.execute("pragma wal_checkpoint(truncate)")
            checkpoint.close()
            os.replace(building, path)      # whole, or not there: a run killed while it is made leaves none
    return path


def store_id(con: sqlite3.Connection) -> str:
    return con.execute("select value from meta where key = 'store_id'").fetchone()[0]


# -- runs, their heartbeats and their claims ----------------------------------------------------------
def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Run:
    """This process's row in `runs`: registered when it starts, beating while it runs (which keeps its
    claims), ended with its state. Claims are taken one call at a time, just before the call is sent."""

    def __init__(self, path: Path, command: str, model: str, argv: list[str] | None = None):
        self.path, self.id = path, uuid.uuid4().hex
        self.lease = claim_seconds()
        self.con = connect(path)
        now = _now()
        self.con.execute("insert into runs (run_id, command, model, host, pid, argv, started_at, heartbeat_at, state) "
                         "values (?, ?, ?, ?, ?, ?, ?, ?, 'running')",
                         [self.id, command, model, HOST, os.getpid(), json.dumps(argv or []), now, now])
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._beating, daemon=True)
        self._beat.start()

    def _beating(self) -> None:
        con = connect(self.path)
        while not self._stop.wait(self.lease / 4):
            try:
                con.execute("begin immediate")
                con.execute("update runs set heartbeat_at = ? where run_id = ?", [_now(), self.id])
                con.execute("update claims set expires_at = ? where run_id = ?", [time.time() + self.lease, self.id])
                con.execute("commit")
            except sqlite3.Error:
                try:
                    con.execute("rollback")
                except sqlite3.Error:
                    pass
        con.close()

    def plan(self, calls: int, cached: int, purpose: str | None = None, label: str | None = None) -> None:
        self.con.execute("update runs set planned = planned + ?, cached = cached + ?, purpose = coalesce(?, purpose), "
                         "label = coalesce(?, label) where run_id = ?", [calls, cached, purpose, label, self.id])

    def claim(self, call_id: str, done_statuses: tuple[str, ...] = ("ok",)) -> bool:
        """Whether this run may send CALL_ID now: nobody stored it, and no live run holds it."""
        con, now = self.con, time.time()
        con.execute("begin immediate")
        try:
            stored = con.execute(f"select 1 from raw_llm_calls where call_id = ? and status in ({', '.join('?' * len(done_statuses))}) "
                                 "limit 1", [call_id, *done_statuses]).fetchone()
            if stored:
                con.execute("commit")
                return False
            held = con.execute("select c.run_id, c.expires_at, r.host, r.pid, r.state from claims as c "
                               "left join runs as r using (run_id) where c.call_id = ?", [call_id]).fetchone()
            if held and held[0] != self.id and held[1] > now and held[4] == "running" \
                    and not (held[2] == HOST and not _alive(held[3])):
                con.execute("commit")
                return False
            con.execute("insert or replace into claims values (?, ?, ?, ?)", [call_id, self.id, now, now + self.lease])
            con.execute("commit")
            return True
        except BaseException:
            con.execute("rollback")
            raise

    def finish(self, state: str, error: str | None = None) -> None:
        self._stop.set()
        self._beat.join(timeout=5)
        self.con.execute("begin immediate")
        self.con.execute("update runs set state = ?, finished_at = ?, heartbeat_at = ?, last_error = coalesce(?, last_error) "
                         "where run_id = ?", [state, _now(), _now(), error, self.id])
        self.con.execute("delete from claims where run_id = ?", [self.id])
        self.con.execute("commit")
        self.con.close()


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


@contextmanager
def reading(warehouse: Path):
    """A connection to the warehouse's store, or None where no run has made one yet."""
    path = store_path(warehouse)
    if not path.exists():
        yield None
        return
    con = connect(path)
    try:
        yield con
    finally:
        con.close()
