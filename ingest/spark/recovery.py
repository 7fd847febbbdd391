"""What a killed Spark build leaves behind, cleared before the next one runs.

dbt-spark builds a Parquet table by dropping it and creating it again from its query. A build
killed in between leaves the table's folder in the warehouse, partly written, and no table in the
catalog; Spark then refuses to create the table over it (LOCATION_ALREADY_EXISTS), and every
later build fails on that model. A folder in a schema's location that no table of the catalog owns
is exactly that leftover: it is removed, and the build creates the table anew. Tables the catalog
has are left alone: an incremental model's partitions are written through Spark's commit protocol,
and its own logic decides what to recompute.

A build killed while Derby was creating the catalog's metastore (its first seconds) leaves a
`metastore_db` folder without Derby's `service.properties`: Derby refuses to boot it or create it
again, and no session or server starts on that catalog. Such a folder registered no table yet; it is
removed before the JVM starts, unless a live process holds Derby's lock on it.

This works where this process can see the warehouse folder (a local path: in-process, a standalone
cluster on this machine, or a Connect server beside it); elsewhere nothing is touched and Spark's
own error names the folder to remove.
"""
from __future__ import annotations

import fcntl
import re
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


# the setting that names the catalog's metastore database (profiles.yml, server.catalog_settings)
METASTORE_URL = "spark.hadoop.javax.jdo.option.ConnectionURL"


def derby_folder(connection_url: str) -> Path | None:
    """The folder of the embedded Derby database a JDBC URL names (jdbc:derby:;databaseName=X… or jdbc:derby:X…)."""
    found = re.match(r"jdbc:derby:(?:;databaseName=)?([^;]+)", connection_url or "")
    return Path(found.group(1)) if found else None


def clear_half_created_metastore(folder: Path | None) -> bool:
    """Remove FOLDER if it is a Derby database whose creation was killed; True if it was removed."""
    if folder is None or not folder.is_dir() or (folder / "service.properties").exists():
        return False
    lock = folder / "dbex.lck"
    if lock.exists():
        # Derby holds an exclusive fcntl lock on dbex.lck (FileChannel.tryLock) while a JVM has the database open
        with open(lock, "r+b") as handle:
            try:
                fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise RuntimeError(f"{folder} is a metastore another Spark process is creating now: "
                                   "wait for it to finish, or stop it, then run again") from None
    print(f"hindsight: {folder} is a metastore whose creation was stopped (no service.properties): removed; "
          "the catalog is created anew", file=sys.stderr)
    shutil.rmtree(folder)
    return True
