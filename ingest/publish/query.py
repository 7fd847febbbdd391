"""`hindsight query` (read-only SQL for analysts) and `hindsight export` (marts to files).

A query is parsed with sqlglot (DuckDB dialect) and refused unless it is a
single read: SELECT, set operations and CTEs (and DESCRIBE, SUMMARIZE, SHOW TABLES); no DDL or DML, no ATTACH,
COPY, INSTALL, LOAD, PRAGMA or SET, and no table function that reads files or
URLs. The warehouse is also opened read-only, as a second line of defence.
"""
from __future__ import annotations

import csv
import json
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from ingest.config import __version__
from ingest.errors import InputError
from ingest.publish.marts import public_marts

FILE_READERS = {"read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json", "read_json_auto",
                "read_json_objects", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects", "read_text",
                "read_blob", "glob", "sniff_csv", "parquet_metadata", "parquet_schema", "parquet_file_metadata",
                "parquet_kv_metadata", "read_xlsx", "st_read", "iceberg_scan", "delta_scan", "sqlite_scan",
                "postgres_scan", "mysql_scan", "query_table", "query"}
# reads, and the catalog reads an analyst starts with (`describe MART`, `summarize MART`, `show tables`)
READS = (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Describe, exp.Summarize)


def check_read_only(sql: str) -> None:
    """Raise InputError unless `sql` is one read-only statement."""
    fix = "write a single SELECT over the warehouse's tables (marts are in the default schema)"
    try:
        statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except sqlglot.errors.ParseError as error:
        raise InputError("query", f"not valid SQL ({str(error).splitlines()[0]})", fix) from None
    if len(statements) != 1:
        raise InputError("query", f"{len(statements)} statements", "send one statement at a time")
    statement = statements[0]
    show_tables = isinstance(statement, exp.Show) and statement.name.upper() == "TABLES"
    if not isinstance(statement, READS) and not show_tables:
        raise InputError("query", f"{statement.key.upper()} is not a read", fix)
    for node in statement.walk():
        if isinstance(node, (exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Alter, exp.Copy,
                             exp.Attach, exp.Install, exp.Pragma, exp.Set, exp.Command, exp.Merge)):
            raise InputError("query", f"{node.key.upper()} is not allowed in a read", fix)
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name() if isinstance(node, exp.Func) else "").lower()
        # a quoted "table" holding a path or URL is DuckDB's replacement scan of a file
        path_like = (isinstance(node, exp.Table) and isinstance(node.this, (exp.Identifier, exp.Literal))
                     and any(ch in node.this.name for ch in "/\\:.") and (node.this.args.get("quoted") or isinstance(node.this, exp.Literal)))
        if name in FILE_READERS or path_like:
            raise InputError("query", f"reading files or URLs ({name or node.sql()}) is not allowed", fix)


def engine_message(error: duckdb.Error) -> str:
    """DuckDB's message on one line: its kind, what it found and its suggestion (the candidate
    columns or tables), without the echo of the query and the caret under it."""
    lines = [line.strip() for line in str(error).splitlines()]
    kept = [line for line in lines[:next((i for i, line in enumerate(lines) if line.startswith("LINE ")), len(lines))] if line]
    return " ".join(kept).rstrip(".")


def run_query(con, sql: str, csv_path: Path | None = None) -> tuple[list[str], list[tuple]]:
    check_read_only(sql)
    con.execute("set enable_external_access = false")   # the engine refuses file and network access too
    try:
        cursor = con.execute(sql)
    except duckdb.Error as error:
        # binder, catalog, conversion and the like: the analyst's own mistake, said as the engine says it
        raise InputError("query", engine_message(error),
                         "correct the query; `hindsight query \"describe MART\"` lists a mart's columns, "
                         "`hindsight query \"show tables\"` the marts") from None
    names = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    if csv_path:
        with Path(csv_path).open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(names)
            writer.writerows(rows)
    return names, rows


def export_marts(con, out_dir: Path, fmt: str) -> list[Path]:
    """Every public mart that exists, one file each, written by DuckDB's COPY, and manifest.json:
    the warehouse version that wrote them, the build they come from (dim_build) and each file's rows.
    Parquet files carry the version in their key-value metadata too, so one passed on alone says it."""
    present = {r[0] for r in con.execute(
        "select table_name from information_schema.tables where table_schema = 'main'").fetchall()}
    if not present & set(public_marts()):
        raise InputError("warehouse", "no mart is built yet, so there is nothing to export", "run `hindsight build` first")
    out_dir.mkdir(parents=True, exist_ok=True)
    options = (f"(format parquet, kv_metadata {{warehouse_version: '{__version__}'}})" if fmt == "parquet"
               else "(format csv, header true)")
    written, files = [], []
    for mart in public_marts():
        if mart not in present:
            continue
        path = (out_dir / f"{mart}.{fmt}").resolve()
        rows = con.execute(f"copy (select * from main.{mart}) to '{str(path).replace(chr(39), chr(39) * 2)}' {options}").fetchone()[0]
        written.append(path)
        files.append({"mart": mart, "file": path.name, "rows": rows})
    build = None
    if "dim_build" in present:
        cursor = con.execute("select * from main.dim_build")
        row = cursor.fetchone()
        build = {d[0]: (str(v) if v is not None else None) for d, v in zip(cursor.description, row)} if row else None
    manifest = {"warehouse_version": __version__, "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "format": fmt, "build": build, "files": files}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return written
