"""A catalog whose metastore a killed build left half-created starts again (ingest/spark/recovery.py).

The layout planted here is what CI found after a build killed 30 s into its first run: Derby's
lock files, log/, seg0/ and tmp/, and no service.properties. Derby refused it ("ERROR XBM0A …
Perhaps Derby was brought down in the middle of creating this database") and no server started."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from spark_sql import run_spark_sql

from conftest import PROJECT, require_spark
from ingest.spark import recovery
from ingest.spark.dbt_on_spark import session_parameters


def half_created_metastore(folder: Path) -> Path:
    """A metastore_db as Derby leaves it when killed while creating it."""
    metastore = folder / "metastore_db"
    for part in ("log", "seg0", "tmp"):
        (metastore / part).mkdir(parents=True)
    (metastore / "db.lck").write_text("00000000-0000-0000-0000-000000000000")
    (metastore / "dbex.lck").write_bytes(b"\x00\x00\x00\x00")
    (metastore / "seg0" / "c10.dat").write_bytes(b"\x00" * 64)
    return metastore


def test_a_half_created_metastore_is_removed_and_a_complete_one_kept(tmp_path, capsys):
    metastore = half_created_metastore(tmp_path / "killed")
    assert recovery.clear_half_created_metastore(metastore)
    assert not metastore.exists()
    assert "creation was stopped (no service.properties): removed" in capsys.readouterr().err

    complete = half_created_metastore(tmp_path / "complete")
    (complete / "service.properties").write_text("derby.storage.databaseEngineVersion=10.16\n")
    assert not recovery.clear_half_created_metastore(complete)
    assert (complete / "seg0" / "c10.dat").exists()
    assert not recovery.clear_half_created_metastore(tmp_path / "none" / "metastore_db")
    assert not recovery.clear_half_created_metastore(None)


def test_a_metastore_a_live_jvm_holds_is_left_alone(tmp_path):
    """Derby locks dbex.lck with FileChannel.tryLock while its JVM has the database open; a JVM does so here."""
    if not shutil.which("java"):
        pytest.skip("no java here: the lock is Derby's, taken by a JVM")
    metastore = half_created_metastore(tmp_path)
    holder = tmp_path / "Hold.java"
    holder.write_text(textwrap.dedent("""
        import java.io.RandomAccessFile;
        public class Hold {
            public static void main(String[] args) throws Exception {
                var lock = new RandomAccessFile(args[0], "rw").getChannel().tryLock();
                System.out.println(lock != null ? "locked" : "busy");
                System.out.flush();
                System.in.read();
            }
        }"""))
    jvm = subprocess.Popen(["java", str(holder), str(metastore / "dbex.lck")], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    try:
        assert jvm.stdout.readline().strip() == "locked"
        with pytest.raises(RuntimeError, match="another Spark process is creating now"):
            recovery.clear_half_created_metastore(metastore)
        assert (metastore / "seg0" / "c10.dat").exists()
    finally:
        jvm.communicate("\n", timeout=30)
    assert recovery.clear_half_created_metastore(metastore)     # its JVM gone, the folder is a leftover
    assert not metastore.exists()


def test_the_in_process_session_clears_the_metastore_its_profile_names(tmp_path, monkeypatch):
    monkeypatch.chdir(PROJECT)
    monkeypatch.setenv("HINDSIGHT_SPARK_WAREHOUSE", str(tmp_path / "catalog"))
    url = session_parameters(".", "spark")["spark.hadoop.javax.jdo.option.ConnectionURL"]
    assert recovery.derby_folder(url) == tmp_path / "catalog" / "metastore_db"
    assert recovery.derby_folder("jdbc:derby:/x/metastore_db;create=true") == Path("/x/metastore_db")
    assert recovery.derby_folder("jdbc:postgresql://db/hive") is None


def test_a_server_starts_on_a_catalog_whose_metastore_creation_was_killed(tmp_path):
    require_spark()
    from ingest.spark.server import connect_server

    catalog = tmp_path / "catalog"
    half_created_metastore(catalog)
    with connect_server(catalog, memory="1g") as server:
        shown = run_spark_sql(server, "create database if not exists main", "show databases")
    assert "main" in shown.split()
    assert (catalog / "metastore_db" / "service.properties").exists()


def test_an_in_process_session_starts_on_a_catalog_whose_metastore_creation_was_killed(tmp_path):
    """The path `hindsight build --target spark` takes: the session of dbt_on_spark, in a process of its own."""
    require_spark()
    catalog = tmp_path / "catalog"
    half_created_metastore(catalog)
    started = subprocess.run(
        [sys.executable, "-c", "from ingest.spark.dbt_on_spark import start_session\n"
                               "spark = start_session('.', 'spark')\n"
                               "print(sorted(d.name for d in spark.catalog.listDatabases()))"],
        cwd=PROJECT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "HINDSIGHT_SPARK_WAREHOUSE": str(catalog), "HINDSIGHT_SPARK_MEMORY": "1g"})
    assert started.returncode == 0, started.stderr[-3000:]
    assert "'default'" in started.stdout
    assert "creation was stopped (no service.properties): removed" in started.stderr
    assert (catalog / "metastore_db" / "service.properties").exists()
