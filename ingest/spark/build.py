"""`hindsight build --target spark`: every mart on Apache Spark (docs/spark.md).

DuckDB stays where data is collected: the loaders and runners write its raw tables. A Spark build
first exports what is new of them to the Parquet landing zone (`hindsight export raw`: a load
written once is not written again), then runs `dbt build` with the Spark target over it. The
target is `spark_connect` when HINDSIGHT_SPARK_REMOTE names a Spark Connect server (sc://host:port),
else `spark`: an in-process session on local[2] or on the standalone master HINDSIGHT_SPARK_MASTER.
What a Spark build refreshes is planned as a DuckDB build's (ingest/build.py), against its own
ledger, raw.spark_builds, one per catalog: everything the first time, after a change to the project
or the arguments, or when a model is missing from the catalog (checked in the dbt process, which
has the session); otherwise what lies downstream of the raw tables loaded since the last Spark
build of that catalog, and nothing when nothing was. Within it the incremental models decide what
to recompute (an appended model rewrites only its partitions).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ingest.build import CODE_CHECKS, EVERYTHING, PROJECT_INPUTS, Ledger, ingest_store, plan, record, say_brought
from ingest.db import PROJECT_DIR, connect, dbt_write_paths, warehouse_path
from ingest.errors import InputError, require_extra
from ingest.publish.landing import default_landing, export_raw


def spark_target() -> str:
    return "spark_connect" if os.environ.get("HINDSIGHT_SPARK_REMOTE") else "spark"


def check_installed() -> None:
    require_extra("spark", "hindsight build --target spark")
    if not os.environ.get("HINDSIGHT_SPARK_REMOTE") and not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        raise RuntimeError("an in-process Spark session needs Java 17 (apt-get install openjdk-17-jre-headless), "
                           "or name a Spark Connect server with HINDSIGHT_SPARK_REMOTE=sc://host:port")


def spark_ledger(db: Path) -> Ledger:
    """The ledger of the Spark catalog this build writes: the Connect server's, or the in-process
    session's folder (profiles.yml's default beside the warehouse)."""
    catalog = os.environ.get("HINDSIGHT_SPARK_REMOTE") or str(
        Path(os.environ.get("HINDSIGHT_SPARK_WAREHOUSE") or f"{db}.spark").resolve())
    return Ledger("spark_builds", (*PROJECT_INPUTS, "ingest/spark"), ("dbt-core", "dbt-spark", "pyspark"), catalog)


def build_on_spark(args: list[str], db: Path | None = None, landing: Path | None = None) -> bool:
    """Export the raw tables' new loads to the landing zone, then `dbt build` on Spark of what they
    touch (or of everything); True when it passed."""
    check_installed()
    db = db or warehouse_path()
    landing = landing or default_landing(db)
    ledger = spark_ledger(db)
    with connect(db) as con:            # creates the raw tables, empty, so every source lands
        say_brought(ingest_store(con, db))   # what the runs stored, into the warehouse and so the landing zone
        written = export_raw(con, landing)
        scope = plan(con, args, ledger)
    print(f"hindsight: landing zone {landing}: {written.partitions} load partitions and {written.snapshots} "
          f"snapshots written, {written.unchanged} already there", file=sys.stderr)
    if not written.out.is_dir():
        raise InputError(landing, "was not written", "check that the folder is writable")
    if scope.select == []:
        print(f"hindsight: {scope.why}: nothing to refresh on Spark (`hindsight build --target spark --all` builds "
              "everything)", file=sys.stderr)
        return True
    print(f"hindsight: {scope.why}; refreshing what depends on it on Spark (`--all` builds everything)"
          if scope.select else f"hindsight: building everything on Spark ({scope.why})", file=sys.stderr)
    target = spark_target()
    env = dict(os.environ, HINDSIGHT_DB=str(db), HINDSIGHT_LANDING=str(landing), DO_NOT_TRACK="1",
               DBT_SEND_ANONYMOUS_USAGE_STATS="false",
               # the executors' Python workers run the table functions: this interpreter has the project
               PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON", sys.executable),
               # Spark's compiled SQL and run results beside DuckDB's, not over them (partial parse states differ)
               **dbt_write_paths(db, "spark"),
               # the selection, if the catalog has every model (dbt_on_spark.py checks it)
               HINDSIGHT_SPARK_SCOPE=" ".join(scope.select or []))
    # dbt in a process of its own that registers the table functions first (ingest/spark/dbt_on_spark.py)
    command = [sys.executable, "-m", "ingest.spark.dbt_on_spark", "build", "--project-dir", str(PROJECT_DIR),
               "--profiles-dir", str(PROJECT_DIR), "--target", target,
               *(a for a in args if a != EVERYTHING), *(CODE_CHECKS if scope.record else [])]
    print(f"hindsight: building the marts on Spark (target {target})", file=sys.stderr)
    ok = subprocess.run(command, env=env, cwd=PROJECT_DIR).returncode == 0
    if ok and scope.record:
        with connect(db) as con:
            record(con, scope, ledger)
    return ok
