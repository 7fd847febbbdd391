"""`hindsight load calls PATH`: another warehouse's calls into this one, for a team that collects on
several machines (each beside its own local server, say).

PATH is the other warehouse's file; its runs' store is read beside it (`<stem>.calls.sqlite`), so
the calls its runs stored since its last build come too. What its runs wrote (the ledger, answers,
judgments, narratives, HindsightBench replies and their registry rows) goes into this warehouse's
runs' store, where runs see it at once (a call stored there is never asked again) and the next
`hindsight build` brings it in. Only what is not stored here already is added: loading the same
PATH again adds nothing, and a call both machines answered keeps this machine's answer (the other's
is counted as a duplicate, never added as a second answer). Its batches are not brought: they
belong to the other machine's provider account, and their results are in its ledger.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ingest.collect import store
from ingest.db import open_warehouse
from ingest.errors import InputError

BROUGHT = ("llm_calls", "responses", "synthetic_narratives", "judgments", "hb_responses", "hb_registry", "hb_inspections")
WITH_LOADS = ("responses", "hb_responses")


@dataclass
class Merged:
    added: dict[str, int] = field(default_factory=dict)
    already: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0           # calls both machines answered: the other's answer not added


def _source_rows(source: Path) -> dict[str, list[list]]:
    """The other warehouse's run-written rows in the store's columns: what its builds brought in, then
    what its store holds beyond (each key once)."""
    columns = store.raw_columns()
    rows: dict[str, list[list]] = {table: [] for table in (*BROUGHT, "loads")}
    if source.exists():
        con = open_warehouse(source, read_only=True)
        try:
            present = {name for (name,) in con.execute(
                "select table_name from information_schema.tables where table_schema = 'raw'").fetchall()}
            for table in rows:
                if table not in present:
                    continue
                have = {n for (n,) in con.execute("select column_name from information_schema.columns "
                                                  "where table_schema = 'raw' and table_name = ?", [table]).fetchall()}
                chosen = ", ".join(f'"{n}"' if n in have else f'null as "{n}"' for n, _ in columns[table])
                rows[table] += [list(r) for r in con.execute(
                    f"select {chosen} from raw.{table} where {store.HISTORY.get(table, 'true')}").fetchall()]
        finally:
            con.close()
    beside = store.store_path(source)
    if beside.exists():
        raw = store.connect(beside)
        try:
            for table in rows:
                names = [n for n, _ in columns[table]]
                rows[table] += [list(r) for r in raw.execute(f"select {', '.join(names)} from raw_{table}").fetchall()]
        finally:
            raw.close()
    elif not source.exists():
        raise InputError(source, "no warehouse file here, and no runs' store beside it",
                         f"give the other machine's warehouse file (its runs' store, {beside.name}, is read beside it)")
    return rows


def load_calls(warehouse: Path, source: Path) -> Merged:
    source = source.expanduser().resolve()
    if source == warehouse.resolve():
        raise InputError(source, "this is the warehouse itself", "give another machine's warehouse file")
    incoming = _source_rows(source)
    columns = store.raw_columns()
    merged = Merged()
    con = store.connect(store.ensure_store(warehouse))
    try:
        con.execute("begin immediate")
        loads = {row[0]: row for row in incoming["loads"]}
        mapped: dict[int, int] = {}
        for table in BROUGHT:
            names = [n for n, _ in columns[table]]
            key = [names.index(k) for k in store.MIRRORED[table]]
            if table == "llm_calls":
                # a call stored here: its answer's start, which tells the same record (a copy both
                # warehouses hold) from a second answer made on the other machine
                ok = dict(con.execute("select call_id, started_at from raw_llm_calls where status = 'ok'").fetchall())
                known = {r[0] for r in con.execute("select call_id from raw_llm_calls").fetchall()}
                started = names.index("started_at")
            else:
                known = {tuple(r) for r in con.execute(
                    f"select {', '.join(store.MIRRORED[table])} from raw_{table}").fetchall()}
            fresh, seen = [], set()
            for row in incoming[table]:
                named = row[key[0]] if table == "llm_calls" else tuple(row[i] for i in key)
                if named in seen:
                    continue
                seen.add(named)
                if table == "llm_calls":
                    status = row[names.index("status")]
                    if named in ok or (named in known and status != "ok"):
                        merged.duplicates += named in ok and status == "ok" and ok[named] != row[started]
                        merged.already[table] = merged.already.get(table, 0) + 1
                        continue
                elif named in known:
                    merged.already[table] = merged.already.get(table, 0) + 1
                    continue
                if table in WITH_LOADS:
                    at = names.index("load_id")
                    row = list(row)
                    row[at] = mapped.get(row[at]) or _load_for(con, row[at], loads.get(row[at]), source, mapped)
                fresh.append(row)
            con.executemany(f"insert into raw_{table} ({', '.join(names)}) values ({', '.join('?' * len(names))})", fresh)
            merged.added[table] = len(fresh)
        con.execute("commit")
    except BaseException:
        if con.in_transaction:
            con.execute("rollback")
        raise
    finally:
        con.close()
    return merged


def _load_for(con: sqlite3.Connection, foreign: int, row: list | None, source: Path, mapped: dict[int, int]) -> int:
    """A load of this store for the other warehouse's load FOREIGN (named after it)."""
    load_id = con.execute("select coalesce(max(load_id), 0) + 1 from raw_loads").fetchone()[0]
    kind = row[1] if row else "answer"
    con.execute("insert into raw_loads (load_id, kind, source_file, status, loaded_at) values (?, ?, ?, 'loaded', ?)",
                [load_id, kind, f"hindsight load calls {source} (its load {foreign})",
                 datetime.now(timezone.utc).replace(tzinfo=None)])
    mapped[foreign] = load_id
    return load_id
