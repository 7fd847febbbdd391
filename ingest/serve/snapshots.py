"""Published snapshots of the public marts, and the serving file readers connect to.

DuckDB allows one writing process per file, or many readers, never both: a BI tool holding the
warehouse open makes a build fail, and a build makes every reader fail. So readers never open the
warehouse. At the end of every successful build the public marts are written as an immutable
snapshot, one folder per build (`<id>/<mart>-<id>.parquet` and `manifest.json`), and the pointer
file `current.csv` is switched to it in one atomic rename. The serving file (`$HINDSIGHT_SERVE`, by
default `<warehouse>.marts.duckdb` beside the warehouse) holds one view per public mart. No build
opens it for writing (it is rewritten, by rename, only when the marts' columns change), so readers
keep their connections across builds and each query reads the snapshot the pointer names.

A view cannot name its file through a link that a publish switches, nor list a folder a file is
removed from while a query runs: DuckDB opens a query's files more than once (to bind, then to
scan), so a fixed path read one snapshot's metadata and the next one's bytes, and a listed name
could be gone when it was opened. Instead each publish adds a slot to `live/`: a hard link to each
mart's file in `live/<mart>/_hindsight_slot_key=<key>/`, a folder no publish had before (the key
counts down from the publish time in microseconds, above every earlier slot's), linked aside and renamed into place whole; then it
points the pointer at that slot. Each view reads the glob `live/<mart>/*/*.parquet` as Hive
partitions and keeps the slot the pointer names: DuckDB reads the pointer when the query runs and
opens only that slot's files, so a query costs what reading one snapshot costs after any number of
publishes. (A filter on each row's file name, until 12-06, read every slot: 30 s and out of memory
for `fct_answers` at 100x after three publishes, against 0.2 s for one slot.) A file in live/
never changes once it is there, and a slot is removed only when it has not been current for
GRACE_SECONDS and is not one of the two newest, so a query opens the bytes of the files it listed.
A view lists the folder when its query is bound and reads the pointer when it runs, so a slot is in
live/ for SETTLE_SECONDS before the pointer names it: a query that listed the folder before the slot
was there has read the pointer by then, and keeps the slot before.
(Slots that were replaced, not added, failed the readers' test when a query scanned the slot a
publish was replacing.) The slot folders are numbered down, so the newest is listed first: DuckDB
takes the view's columns, and its estimate of the rows, from the first file it lists (SLOT_COLUMN).

The snapshot's id is the build's dbt invocation id, which its dim_build holds: a reader asks
dim_build which build it sees. A failed or killed build publishes nothing; its staging folder
(`.staging-<id>`) is never named by the pointer and the next publish removes it. The last
$HINDSIGHT_SNAPSHOT_KEEP snapshots (default 3) stay on disk, to be pinned or compared.

A mart whose YAML names `meta: {publish_partition_by: <column>}` (the answer-level facts, by model) is
published as a file per value of that column (`<mart>-<id>-p<digest>-<n>.parquet`) beside an empty
`<mart>-<id>.parquet` that carries its columns; the manifest records each partition's signature (what
its rows were computed from, macros/publish_snapshot.sql partition_signatures), and the next publish
links the partitions whose signature it holds and writes only the others: appending one model's
answers writes that model's files, not 17.8 M answers again.

dbt writes the Parquet files in its on-run-end hook (macros/publish_snapshot.sql) through its own
connection; the file-system steps here run in dbt's process as DuckDB functions the project's dbt
plugin registers (ingest/serve/dbt_plugin.py), so plain `dbt build` publishes as `hindsight build` does.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from ingest.db import duckdb_settings, open_warehouse, require_warehouse, serve_path
from ingest.errors import InputError

KEEP_ENV = "HINDSIGHT_SNAPSHOT_KEEP"
DEFAULT_KEEP = 3
POINTER, LIVE, MANIFEST, STAGING = "current.csv", "live", "manifest.json", ".staging-"
PARTS = ".parts-"               # where a run writes a partitioned mart's changed partitions (a file each), in staging
PLAN = ".partitions-"           # <PLAN><mart>.json in staging: each partition's signature, and its files when linked
SCHEMA_FILE = "0-schema"        # the flat live/'s empty file of each mart's columns (before 12-06)
KEPT_SLOTS = 2                  # the current slot and the one before it stay whatever their age
# a slot no longer current is removed this long after: longer than any query between its listing of
# live/ and its opening of the files (a pinned reader, open_marts, reads the snapshot folders instead)
GRACE_SECONDS = 600
# a new slot is in live/ this long before the pointer names it. A view lists live/ when a query is
# bound and reads the pointer when it runs: a query that listed the folder before (or while) the slot's
# files were added, then read a pointer already naming that slot, kept none of its rows, or some of
# a partitioned mart's (CI saw a dim_build of no rows once). Binding to running takes milliseconds;
# waiting here keeps every such query on the slot before
SETTLE_SECONDS = 0.5
# live/<mart>/<SLOT_COLUMN>=<NEWEST_FIRST - slot>/: the Hive partition the views filter on, numbered
# down so that the newest slot is listed first. DuckDB takes a view's columns, and its estimate of
# the rows, from the first file it lists: the newest slot's columns are the serving file's, and an
# estimate of more rows than the pointer's one keeps the pointer the side the join builds, whose
# value DuckDB then pushes into the scan to skip the other slots (an empty first file, the oldest
# slot's schema file until 12-06, made DuckDB build on the scan and read every slot)
SLOT_COLUMN = "_hindsight_slot_key"
ROWS, POINTER_ROW = "_hindsight_rows", "_hindsight_pointer"      # the views' aliases, out of the marts' way
NEWEST_FIRST = 10**16 - 1
# where the serving file records what its views were made from (a schema of its own, out of the marts' way)
META = "hindsight_serving"


def snapshots_root(warehouse: Path) -> Path:
    """The snapshot folders, beside the serving file: `<serving stem>.snapshots/`."""
    serve = serve_path(warehouse)
    return serve.parent / f"{serve.stem}.snapshots"


def keep() -> int:
    value = os.environ.get(KEEP_ENV, "")
    try:
        count = int(value) if value.strip() else DEFAULT_KEEP
    except ValueError:
        count = 0
    if count < 1:
        raise InputError(KEEP_ENV, f"{value!r} is not a number of snapshots of at least 1", f"set {KEEP_ENV}=3, for example")
    return count


@dataclass
class Snapshot:
    id: str
    path: Path
    manifest: dict

    @property
    def bytes(self) -> int:
        return sum(f.stat().st_size for f in self.path.iterdir() if f.is_file())


def _read_manifest(folder: Path) -> dict | None:
    try:
        return json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


def snapshots(warehouse: Path) -> list[Snapshot]:
    """The complete snapshots on disk, oldest first (by the time they were published)."""
    root = snapshots_root(warehouse)
    found = []
    if root.is_dir():
        for folder in root.iterdir():
            if folder.is_dir() and not folder.is_symlink() and not folder.name.startswith(STAGING):
                manifest = _read_manifest(folder)
                if manifest:
                    found.append(Snapshot(folder.name, folder, manifest))
    return sorted(found, key=lambda s: (s.manifest.get("published_at", ""), s.id))


def current(warehouse: Path) -> Snapshot | None:
    """The snapshot readers see now, or None before the first publish."""
    root = snapshots_root(warehouse)
    pointer = _pointer(root)
    if pointer is None:
        return None
    snapshot_id = pointer[0]
    manifest = _read_manifest(root / snapshot_id)
    return Snapshot(snapshot_id, root / snapshot_id, manifest) if manifest else None


def begin(warehouse: Path, snapshot_id: str) -> str:
    """A fresh staging folder for snapshot SNAPSHOT_ID, or '' when that snapshot is already published."""
    root = snapshots_root(warehouse)
    if (root / snapshot_id / MANIFEST).exists():
        return ""
    staging = root / f"{STAGING}{snapshot_id}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    return str(staging)


def reuse(warehouse: Path, staging: Path, snapshot_id: str, mart: str, columns: list[list[str]]) -> bool:
    """Give snapshot SNAPSHOT_ID, being staged, the current snapshot's file of MART (a hard link, the
    same bytes) when that snapshot holds it with these COLUMNS ([mart, column, type] rows); False
    when it does not, and the mart must be written."""
    now, entry = _held(warehouse, mart, columns, None)
    if not entry:
        return False
    try:
        os.link(now.path / mart_file(mart, now.id), Path(staging) / mart_file(mart, snapshot_id))
    except OSError:   # gone, or another file system: write it
        return False
    return True


def reuse_partitions(warehouse: Path, staging: Path, snapshot_id: str, mart: str, columns: list[list[str]],
                     column: str, signatures: list[list] | None) -> list | None:
    """Give snapshot SNAPSHOT_ID, being staged, each partition of MART (by COLUMN) whose signature the
    current snapshot holds with these COLUMNS (hard links), and return the partition values left to
    write (each into a file of its own in staging's PARTS<mart>/), or None when the mart has values
    no signature names and every value must be found and written. SIGNATURES: [value, signature] per
    partition the mart has now, or None when the run left the mart unchanged (the current snapshot's
    signatures hold)."""
    now, entry = _held(warehouse, mart, columns, column)
    if signatures is None:
        signatures = [[part["value"], part["signature"]] for part in entry["partitions"]] if entry else []
    (Path(staging) / f"{PARTS}{mart}").mkdir(exist_ok=True)
    if not signatures:          # nothing to key on (no parent has the column): every value the mart has
        _write_plan(staging, mart, column, [])
        return None
    held = {json.dumps(part["value"]): part for part in entry["partitions"]} if entry else {}
    plan, to_write = [], []
    for value, signature in signatures:
        part = held.get(json.dumps(value))
        if part and part["signature"] == signature and _link_partition(now, Path(staging), mart, snapshot_id, part):
            plan.append({**part, "written": False})
        else:
            plan.append({"value": value, "signature": signature})
            to_write.append(value)
    _write_plan(staging, mart, column, plan)
    return to_write


def _held(warehouse: Path, mart: str, columns: list[list[str]], partition_by: str | None) -> tuple[Snapshot | None, dict | None]:
    """The current snapshot, and its entry of MART when it holds that mart with these COLUMNS
    ([mart, column, type] rows), published by PARTITION_BY (None: one file)."""
    now = current(warehouse)
    entry = now.manifest.get("marts", {}).get(mart) if now else None
    if not entry or entry.get("partition_by") != partition_by or entry["columns"] != [[c, dtype] for _, c, dtype in columns]:
        return now, None
    return now, entry


def _link_partition(now: Snapshot, staging: Path, mart: str, snapshot_id: str, part: dict) -> bool:
    try:
        for name in part["files"]:
            os.link(now.path / mart_file(mart, now.id, name), staging / mart_file(mart, snapshot_id, name))
    except OSError:   # gone, or another file system: write it
        for name in part["files"]:
            (staging / mart_file(mart, snapshot_id, name)).unlink(missing_ok=True)
        return False
    return True


def _write_plan(staging: Path, mart: str, column: str, plan: list[dict]) -> None:
    (Path(staging) / f"{PLAN}{mart}.json").write_text(json.dumps({"column": column, "partitions": plan}))


def partition_key(value: object) -> str:
    """A partition's name in its files' names: a digest of its value (model names hold / and :)."""
    return "p" + hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]


def _gather_partitions(con: duckdb.DuckDBPyConnection, staging: Path, mart: str, snapshot_id: str) -> dict | None:
    """The partitions of MART staged by this run: the written ones (a file each in PARTS<mart>/, its
    value read from it; one of no rows is dropped) renamed beside the linked ones; None for an
    unpartitioned mart."""
    plan_file = staging / f"{PLAN}{mart}.json"
    if not plan_file.exists():
        return None
    plan = json.loads(plan_file.read_text())
    parts = {json.dumps(part["value"]): dict(part) for part in plan["partitions"]}
    written = staging / f"{PARTS}{mart}"
    for file in sorted(written.glob("*.parquet")) if written.is_dir() else []:
        values = con.execute(f"select distinct {_quote(plan['column'])} from read_parquet(?)", [str(file)]).fetchall()
        if not values:
            file.unlink()
            continue
        if len(values) != 1:
            raise RuntimeError(f"{file}: a partition file of {mart} holds {len(values)} values of {plan['column']}, not one")
        part = parts.setdefault(json.dumps(values[0][0]), {"value": values[0][0], "signature": None})
        part.setdefault("files", [])
        part["written"] = True
        name = f"{partition_key(part['value'])}-{len(part['files'])}"
        os.rename(file, staging / mart_file(mart, snapshot_id, name))
        part["files"].append(name)
    shutil.rmtree(written, ignore_errors=True)
    plan_file.unlink()
    entries = []
    for part in parts.values():         # a value with no rows keeps its signature: not asked for again
        part.setdefault("files", [])
        part.setdefault("written", "rows" not in part)      # linked parts carry their rows and written: False
        if "rows" not in part:
            part["rows"] = sum(con.execute("select sum(num_rows) from parquet_file_metadata(?)",
                                           [str(staging / mart_file(mart, snapshot_id, name))]).fetchone()[0] or 0
                               for name in part["files"])
        entries.append({key: part[key] for key in ("value", "signature", "files", "rows", "written")})
    return {"partition_by": plan["column"], "partitions": sorted(entries, key=lambda part: json.dumps(part["value"]))}


def mart_files(mart: str, snapshot_id: str, entry: dict) -> list[str]:
    """Every file of MART in snapshot SNAPSHOT_ID: the one file, or the columns' file and the partitions'."""
    return [mart_file(mart, snapshot_id)] + [mart_file(mart, snapshot_id, name) for part in entry.get("partitions", [])
                                            for name in part["files"]]


def commit(warehouse: Path, staging: Path, snapshot_id: str, columns: list[list[str]],
           seconds: dict[str, float] | None = None) -> Path:
    """Make the staging folder snapshot SNAPSHOT_ID and the current one, then prune: COLUMNS are the
    marts' [mart, column, type] rows in column order, as the warehouse declares them; SECONDS, what
    each mart's publish took (recorded in the manifest)."""
    root, staging = snapshots_root(warehouse), Path(staging)
    marts: dict[str, dict] = {}
    for mart, column, dtype in columns:
        marts.setdefault(mart, {"columns": []})["columns"].append([column, dtype])
    with duckdb.connect() as con:
        for mart, entry in marts.items():
            file = staging / mart_file(mart, snapshot_id)
            entry.update(_gather_partitions(con, staging, mart, snapshot_id) or {})
            files = [staging / name for name in mart_files(mart, snapshot_id, entry)]
            entry["rows"] = con.execute("select sum(num_rows) from parquet_file_metadata(?)", [str(file)]).fetchone()[0] + sum(
                part["rows"] for part in entry.get("partitions", []))
            entry["bytes"] = sum(f.stat().st_size for f in files)
            # the columns Parquet gives back as another type (JSON comes back as text, say): the view casts them
            stored = dict(con.execute("select column_name, column_type from (describe select * from read_parquet(?))",
                                      [str(file)]).fetchall())
            entry["cast"] = [c for c, t in entry["columns"] if stored.get(c) != t]
            if seconds and mart in seconds:
                entry["publish_seconds"] = round(seconds[mart], 3)
            for f in files:
                _fsync_file(f)
    manifest = {"snapshot_id": snapshot_id, "published_at": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
                "warehouse": str(warehouse), "marts": marts}
    _write_durably(staging / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    final = root / snapshot_id
    os.rename(staging, final)
    _fsync_dir(root)
    slot = _fill_slot(root, final, snapshot_id, marts)
    time.sleep(SETTLE_SECONDS)
    _point_current(root, snapshot_id, slot)
    ensure_serving_file(warehouse, marts)
    prune(warehouse)
    return final


def mart_file(mart: str, snapshot_id: str, part: str | None = None) -> str:
    """A mart's file in snapshot SNAPSHOT_ID (or in live/, for a slot or the schema file); with PART,
    one of a partitioned mart's partition files."""
    return f"{mart}-{snapshot_id}-{part}.parquet" if part else f"{mart}-{snapshot_id}.parquet"


def _pointer(root: Path) -> tuple[str, int] | None:
    try:
        snapshot_id, slot = (root / POINTER).read_text().splitlines()[1].split(",")
        return snapshot_id, int(slot)
    except (OSError, IndexError, ValueError):
        return None


def slot_folder(live: Path, mart: str, slot: int) -> Path:
    """Where slot SLOT keeps MART's files in live/: a Hive-style folder the views filter on."""
    return live / mart / f"{SLOT_COLUMN}={NEWEST_FIRST - slot:016d}"


def slot_of(folder: Path) -> int:
    """The slot a slot folder of live/ holds (slot_folder's name, read back)."""
    return NEWEST_FIRST - int(folder.name.split("=")[1])


def live_slots(warehouse: Path, mart: str) -> dict[int, list[str]]:
    """The slots live/ holds of MART, each with its files' names."""
    folders = (snapshots_root(warehouse) / LIVE / mart).glob(f"{SLOT_COLUMN}=*")
    return {slot_of(folder): sorted(f.name for f in folder.iterdir()) for folder in folders}


def _fill_slot(root: Path, final: Path, snapshot_id: str, marts: dict[str, dict]) -> int:
    """Put the snapshot's files in live/ as a new slot, and return it; remove the slots retired longer
    than GRACE_SECONDS ago."""
    live = root / LIVE
    now = _pointer(root)
    slot = max(time.time_ns() // 1000, now[1] + 1 if now else 0)

    for mart in marts:
        # linked aside (out of the views' glob) and renamed into place whole: a listing sees all of
        # the slot's files or none
        folder, fresh = slot_folder(live, mart, slot), live / f".{mart}-{slot}.new"
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(fresh, ignore_errors=True)
        fresh.mkdir()
        for name, linked in zip(mart_files(mart, snapshot_id, marts[mart]), mart_files(mart, f"slot{slot}", marts[mart])):
            os.link(final / name, fresh / linked)
        _fsync_dir(fresh)
        os.rename(fresh, folder)
        _fsync_dir(folder.parent)
    _retire_slots(live, slot)
    return slot


def _retire_slots(live: Path, newest: int) -> None:
    """Remove each slot that stopped being current (the next slot's time) GRACE_SECONDS ago or more,
    but never one of the KEPT_SLOTS newest. (Slots of the flat live/ before 12-06 go the same way.)"""
    flat = {path: int(match.group(1)) for path in live.glob("*-slot*.parquet")
            if (match := re.search(r"-slot(\d+)(-p\w+-\d+)?\.parquet$", path.name))}
    held = {folder: slot_of(folder) for folder in live.glob(f"*/{SLOT_COLUMN}=*")} | flat
    slots = sorted(set(held.values()) | {newest})
    cutoff = time.time_ns() // 1000 - GRACE_SECONDS * 1_000_000
    retired = {slot for slot, following in zip(slots, slots[1:]) if following <= cutoff} - set(slots[-KEPT_SLOTS:])
    for path, slot in held.items():
        if slot in retired:
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    if all(slot in retired for slot in flat.values()):       # the flat slots all gone: their schema files too
        for path in live.glob(f"*-{SCHEMA_FILE}.parquet"):
            path.unlink(missing_ok=True)


def _write_durably(path: Path, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _point_current(root: Path, snapshot_id: str, slot: int) -> None:
    """The pointer -> SNAPSHOT_ID in SLOT, in one step: a new file renamed over the old one (rename is atomic)."""
    fresh = root / f".{POINTER}-{snapshot_id}"
    _write_durably(fresh, f"snapshot_id,slot\n{snapshot_id},{slot}\n")
    os.replace(fresh, root / POINTER)
    _fsync_dir(root)


def prune(warehouse: Path) -> list[str]:
    """Remove all but the newest keep() snapshots (never the current one) and abandoned staging folders."""
    root = snapshots_root(warehouse)
    now = current(warehouse)
    complete = snapshots(warehouse)
    removed = [s.id for s in complete[:max(0, len(complete) - keep())] if not now or s.id != now.id]
    for snapshot_id in removed:
        shutil.rmtree(root / snapshot_id, ignore_errors=True)
    for leftover in root.glob(f"{STAGING}*"):  # a build killed while it wrote (one writer at a time: none is running)
        shutil.rmtree(leftover, ignore_errors=True)
    return removed


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def serving_views(warehouse: Path, marts: dict[str, dict], pinned: str | None = None) -> dict[str, str]:
    """Each mart's view: the rows of its file in live/ that the pointer names, with the warehouse's
    columns and types (a column Parquet stores as another type, JSON as text for one, is cast
    back). With PINNED, a snapshot id, the views read that snapshot's files instead."""
    root = snapshots_root(warehouse)

    def column(name: str, dtype: str, cast: set[str]) -> str:
        value = f"{ROWS}.{_quote(name)}"
        return f"cast({value} as {dtype}) as {_quote(name)}" if name in cast else f"{value} as {_quote(name)}"

    def source(mart: str) -> str:
        if pinned:
            # the empty file of a partitioned mart's columns last: DuckDB estimates the rows from the first
            files = ", ".join(_literal(str(root / pinned / name)) for name in mart_files(mart, pinned, marts[mart])[::-1])
            return f"read_parquet([{files}]) as {ROWS}"
        # the pointer read when the query runs, its columns given (no sniffing: a third of a small
        # mart's query), and joined (its one row): DuckDB prunes the other slots' folders on its value
        # before it opens them. (A scalar subquery instead kept DuckDB from aggregating below a join:
        # answers per format at 100x took 0.42 s, not 0.23.)
        pointer = (f"(select {NEWEST_FIRST} - slot as {SLOT_COLUMN} from read_csv({_literal(str(root / POINTER))}, "
                   "header = true, auto_detect = false, columns = {'snapshot_id': 'VARCHAR', 'slot': 'BIGINT'}))")
        return (f"read_parquet({_literal(str(root / LIVE / mart / '*' / '*.parquet'))}, hive_partitioning = true, "
                f"hive_types = {{{_literal(SLOT_COLUMN)}: 'BIGINT'}}) as {ROWS} "
                f"inner join {pointer} as {POINTER_ROW} using ({SLOT_COLUMN})")

    return {mart: "select " + ", ".join(column(c, t, set(entry.get("cast", [c for c, _ in entry["columns"]])))
                                        for c, t in entry["columns"])
            + f" from {source(mart)}" for mart, entry in sorted(marts.items())}


def ensure_serving_file(warehouse: Path, marts: dict[str, dict]) -> bool:
    """Make the serving file hold exactly these views, if it does not already; True when it was
    (re)written. Written aside and renamed into place: a reader connected to the old file keeps
    reading through its views until it reconnects."""
    serve = serve_path(warehouse)
    views = serving_views(warehouse, marts)
    signature = hashlib.sha256(json.dumps(views, sort_keys=True).encode()).hexdigest()
    if serving_signature(serve) == signature:
        return False
    serve.parent.mkdir(parents=True, exist_ok=True)
    fresh = serve.parent / f".{serve.name}.{os.getpid()}.new"
    fresh.unlink(missing_ok=True)
    with duckdb.connect(str(fresh)) as con:
        for mart, sql in views.items():
            con.execute(f"create view {_quote(mart)} as {sql}")
        con.execute(f"create schema {META}")
        con.execute(f"create table {META}.views as select ? as signature", [signature])
        con.execute("checkpoint")
    os.replace(fresh, serve)
    return True


def serving_signature(serve: Path) -> str | None:
    """What the serving file's views were made from, or None when it is missing or unreadable."""
    if not serve.exists():
        return None
    try:
        # the readers' settings: DuckDB refuses a second configuration for a file this process has open
        with duckdb.connect(str(serve), read_only=True, config=duckdb_settings()) as con:
            return con.execute(f"select signature from {META}.views").fetchone()[0]
    except duckdb.Error:
        return None


def open_serving(warehouse: Path, pin: bool = False) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the serving file, which follows every publish; with PIN, one that
    reads the snapshot current now (what `hindsight query`, `export` and `report` read), for as long
    as it is kept (keep(): a short-lived reader's)."""
    serve, now = serve_path(warehouse), current(warehouse)
    if not serve.exists() or now is None:
        raise InputError(serve, "no published snapshot of the marts yet",
                         "run `hindsight build` (every successful build publishes one; `hindsight publish` publishes a "
                         "warehouse built before), or pass --live to read the warehouse itself")
    con = duckdb.connect(str(serve), read_only=True, config=duckdb_settings())
    # views read the snapshot folder: readers that switch external access off must still reach it
    con.execute(f"set allowed_directories = [{_literal(str(snapshots_root(warehouse)) + os.sep)}]")
    if pin:
        # the snapshot current now, its files by name (temporary views come first in name
        # resolution): every query of a report reads one build's marts, whatever is published meanwhile
        for mart, sql in serving_views(warehouse, now.manifest["marts"], pinned=now.id).items():
            con.execute(f"create temp view {_quote(mart)} as {sql}")
    return con


def disk_use(warehouse: Path) -> int:
    """Bytes the snapshots take on disk (staging folders included; a file and its live/ link once)."""
    root = snapshots_root(warehouse)
    files = {(s.st_dev, s.st_ino): s.st_size for s in (f.stat() for f in root.rglob("*") if f.is_file())} if root.is_dir() else {}
    return sum(files.values())


def open_marts(warehouse: Path, live: bool = False) -> duckdb.DuckDBPyConnection:
    """Where a reader reads the marts: the published snapshot (never blocks a build, nor waits for
    one), or with LIVE the warehouse itself, read-only (it waits for a build, and a build for it)."""
    if not live:
        return open_serving(warehouse, pin=True)
    require_warehouse(warehouse)
    return open_warehouse(warehouse, read_only=True)
