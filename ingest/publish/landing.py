"""`hindsight export raw`: the raw tables as a Parquet landing zone, the way another engine (Spark,
a lakehouse) reads what the loaders and runners collected in DuckDB.

Layout: `DIR/<table>/load_id=<n>/part-0.parquet` for a table with a load id (Hive partitions: every
reader gets `load_id` back from the folder name), `DIR/<table>/part-0.parquet` for the
few tables without one (the ledger of calls, batches, registrations and designs, which change in
place), and `DIR/_landing.json`, what has been written. Incremental: a load whose rows are already
written is not written again; a load that grew since (a runner still appending under its load id)
and a snapshot whose content changed are written anew. Each file is written beside its place and
then renamed into it, so an interrupted export leaves no half file, and running it again finishes.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ingest.config import __version__, build_ledgers
from ingest.errors import InputError

MANIFEST = "_landing.json"


@dataclass
class LandingExport:
    out: Path
    partitions: int = 0          # load partitions written now
    snapshots: int = 0           # snapshot tables written now
    rows: int = 0
    unchanged: int = 0           # partitions and snapshots already in place
    tables: list[str] = field(default_factory=list)


def default_landing(warehouse: Path) -> Path:
    """$HINDSIGHT_LANDING, else `landing/` beside the warehouse."""
    value = os.environ.get("HINDSIGHT_LANDING")
    return Path(value).expanduser().resolve() if value else warehouse.parent / "landing"


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _copy(con, select: str, target: Path) -> int:
    """Write SELECT to TARGET atomically (a temporary file renamed into place); its rows."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    rows = con.execute(f"copy ({select}) to {_quote(partial)} "
                       f"(format parquet, kv_metadata {{warehouse_version: '{__version__}'}})").fetchone()[0]
    os.replace(partial, target)
    return rows


def export_raw(con, out: Path) -> LandingExport:
    if out.exists() and not out.is_dir():
        raise InputError(out, "is a file, not a folder", "pass a folder for the landing zone (it is created if missing)")
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    except json.JSONDecodeError as error:
        raise InputError(manifest_path, f"unreadable ({error.msg})", "delete it and the folder's tables, then export again") from None
    written = manifest.setdefault("tables", {})
    result = LandingExport(out)
    tables = [r[0] for r in con.execute("""select table_name from information_schema.tables
                                           where table_schema = 'raw' and table_type = 'BASE TABLE'
                                             and not list_contains(?, table_name)
                                           order by table_name""", [build_ledgers()]).fetchall()]
    for table in tables:
        columns = [r[0] for r in con.execute("""select column_name from information_schema.columns
                                                where table_schema = 'raw' and table_name = ? order by ordinal_position""",
                                             [table]).fetchall()]
        state = written.setdefault(table, {})
        if "load_id" in columns:
            # rows are only ever appended under a load id: a count that moved means the load grew
            counts = dict(con.execute(f"select load_id, count(*) from raw.{table} group by load_id").fetchall())
            done = state.setdefault("loads", {})
            if not counts:
                # an empty table is an empty file (its columns, no rows), so a reader finds the
                # table; it gives way to the table's first load (a folder holds files or partitions)
                if state.get("empty") != columns:
                    _copy(con, f"select * from raw.{table} limit 0", out / table / "part-0.parquet")
                    state["empty"] = columns
                    result.snapshots += 1
                    result.tables.append(table)
            elif state.pop("empty", None) is not None:
                (out / table / "part-0.parquet").unlink(missing_ok=True)
            others = ", ".join(c for c in columns if c != "load_id")
            for load_id, count in sorted(counts.items()):
                if done.get(str(load_id)) == count:
                    result.unchanged += 1
                    continue
                result.rows += _copy(con, f"select {others} from raw.{table} where load_id = {int(load_id)}",
                                     out / table / f"load_id={load_id}" / "part-0.parquet")
                done[str(load_id)] = count
                result.partitions += 1
                if table not in result.tables:
                    result.tables.append(table)
        else:
            signature = con.execute(f"select count(*), coalesce(sum(hash(t)), 0) from raw.{table} as t").fetchone()
            signature = f"{signature[0]}:{signature[1]}"
            if state.get("signature") == signature:
                result.unchanged += 1
                continue
            result.rows += _copy(con, f"select * from raw.{table}", out / table / "part-0.parquet")
            state["signature"] = signature
            result.snapshots += 1
            result.tables.append(table)
        # the manifest after every table, so an interrupted export resumes there (a file it wrote
        # but did not record is written again)
        manifest.update(warehouse_version=__version__, written_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        partial = manifest_path.with_name(MANIFEST + ".partial")
        partial.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        os.replace(partial, manifest_path)
    return result
