"""What a killed Spark build leaves behind, cleared before the next one runs.

dbt-spark builds a Parquet table by dropping it and creating it again from its query. A build
killed in between leaves the table's folder in the warehouse, partly written, and no table in the
catalog; Spark then refuses to create the table over it (LOCATION_ALREADY_EXISTS), and every
later build fails on that model. A folder in a schema's location that no table of the catalog owns
is exactly that leftover: it is removed, and the build creates the table anew. Tables the catalog
has are left alone: an incremental model's partitions are written through Spark's commit protocol,
and its own logic decides what to recompute.

This works where this process can see the warehouse folder (a local path: in-process, a standalone
cluster on this machine, or a Connect server beside it); elsewhere nothing is touched and Spark's
own error names the folder to remove.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse


def local_folder(uri: str) -> Path | None:
    """The local path of a catalog location (file:/… or a plain path), or None for another filesystem."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file"):
        return None
    path = Path(unquote(parsed.path))
    return path if path.is_dir() else None


def orphaned_folders(spark) -> list[Path]:
    """The folders in the schemas' locations that no table of the catalog owns."""
    found = []
    databases = spark.catalog.listDatabases()
    schemas = {database.name.lower() for database in databases}
    for database in databases:
        folder = local_folder(database.locationUri or "")
        if folder is None:
            continue
        tables = {table.name.lower() for table in spark.catalog.listTables(database.name)}
        for entry in folder.iterdir():
            name = entry.name.lower()
            if (entry.is_dir() and not name.startswith((".", "_")) and name not in tables
                    and not (name.endswith(".db") and name[:-3] in schemas)       # the warehouse folder holds the schemas
                    and name != "metastore_db"):
                found.append(entry)
    return found


def clear_killed_build(spark) -> list[Path]:
    """Remove the folders a killed build left without a table; the removed ones."""
    removed = orphaned_folders(spark)
    for folder in removed:
        print(f"hindsight: {folder} holds no table of the catalog (a build stopped while writing it): removed",
              file=sys.stderr)
        shutil.rmtree(folder, ignore_errors=True)
    return removed
