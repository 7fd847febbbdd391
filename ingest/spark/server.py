"""A Spark server on this machine from pyspark's own jars, for the tests and the benchmark.

- `connect_server(folder)`: a Spark Connect server on 127.0.0.1 (sbin/start-connect-server.sh) with
  the catalog, warehouse folder and SQL settings the project's Spark target needs (profiles.yml);
  `hindsight build --target spark` reaches it through HINDSIGHT_SPARK_REMOTE=<its url>.
- `standalone_cluster(folder, workers)`: a standalone master and workers (bin/spark-class), reached
  through HINDSIGHT_SPARK_MASTER=<its url> by the in-process session.

Both bind 127.0.0.1 only, keep their logs in FOLDER and stop with the `with` block. Nothing is
fetched at run time: the jars are pyspark's.
"""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ingest.spark import recovery

# the SQL settings of profiles.yml's Spark outputs, which a server's own sessions need too
SQL_SETTINGS = {
    "spark.sql.parser.escapedStringLiterals": "true",
    "spark.sql.parquet.mergeSchema": "true",
    "spark.sql.timestampType": "TIMESTAMP_NTZ",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.unionOutputPartitioning": "false",
    "spark.sql.shuffle.partitions": "16",
}


def spark_home() -> Path:
    import pyspark
    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, timeout: float, log: Path, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        if process is not None and process.poll() is not None:
            break
        time.sleep(0.5)
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
    raise RuntimeError(f"Spark did not listen on 127.0.0.1:{port} within {timeout:.0f} s; its log {log} ends:\n{tail}")


def catalog_settings(folder: Path, memory: str = "4g") -> dict[str, str]:
    """The static settings of a server owning the project's tables in FOLDER (a Hive catalog in Derby)."""
    return {"spark.sql.catalogImplementation": "hive", "spark.sql.warehouse.dir": str(folder / "warehouse"),
            recovery.METASTORE_URL: f"jdbc:derby:;databaseName={folder}/metastore_db;create=true",
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={folder}", "spark.driver.memory": memory,
            "spark.ui.enabled": "false", **SQL_SETTINGS}


def _env(folder: Path) -> dict[str, str]:
    return {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOG_DIR": str(folder / "logs"),
            "SPARK_PID_DIR": str(folder), "SPARK_IDENT_STRING": f"hindsight-{os.getpid()}-{folder.name}",
            "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "", "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable)}


@dataclass
class ConnectServer:
    folder: Path
    port: int
    env: dict = field(repr=False, default_factory=dict)

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def pid(self) -> int | None:
        found = list(self.folder.glob("*.pid"))
        return int(found[0].read_text().strip()) if found else None

    def stop(self) -> None:
        subprocess.run([str(spark_home() / "sbin" / "stop-connect-server.sh")], env=self.env,
                       capture_output=True, timeout=120)


@contextlib.contextmanager
def connect_server(folder: Path, master: str = "local[2]", memory: str = "4g", timeout: float = 120):
    """A Spark Connect server for the project's tables in FOLDER, stopped on exit."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = _env(folder)
    env.pop("SPARK_NO_DAEMONIZE")
    settings = {**catalog_settings(folder, memory), "spark.connect.grpc.binding.address": "127.0.0.1",
                "spark.connect.grpc.binding.port": str(port)}
    recovery.clear_half_created_metastore(recovery.derby_folder(settings[recovery.METASTORE_URL]))
    command = [str(spark_home() / "sbin" / "start-connect-server.sh"), "--master", master, "--driver-memory", memory]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    started = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    if started.returncode != 0:
        raise RuntimeError(f"start-connect-server.sh failed: {started.stdout[-2000:]}{started.stderr[-2000:]}")
    server = ConnectServer(folder, port, env)
    try:
        logs = sorted((folder / "logs").glob("*.out"))
        wait_for_port(port, timeout, logs[-1] if logs else folder / "logs")
        yield server
    finally:
        server.stop()


@dataclass
class Cluster:
    url: str
    processes: list[subprocess.Popen]


@contextlib.contextmanager
def standalone_cluster(folder: Path, workers: int = 2, cores: int = 1, memory: str = "3g", timeout: float = 120):
    """A standalone master and WORKERS workers on 127.0.0.1, stopped on exit."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "logs").mkdir(exist_ok=True)
    env = _env(folder)
    spark_class = str(spark_home() / "bin" / "spark-class")
    port = free_port()
    processes: list[subprocess.Popen] = []

    def start(name: str, *args: str) -> subprocess.Popen:
        log = open(folder / "logs" / f"{name}.log", "w")
        process = subprocess.Popen([spark_class, *args], env=env, stdout=log, stderr=subprocess.STDOUT)
        processes.append(process)
        return process

    try:
        master = start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                       "--webui-port", str(free_port()))
        wait_for_port(port, timeout, folder / "logs" / "master.log", master)
        url = f"spark://127.0.0.1:{port}"
        for number in range(workers):
            start(f"worker-{number}", "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                  "--cores", str(cores), "--memory", memory, "--webui-port", str(free_port()),
                  "--work-dir", str(folder / f"work-{number}"))
        deadline = time.monotonic() + timeout
        log = folder / "logs" / "master.log"
        while time.monotonic() < deadline and log.read_text(errors="replace").count("Registering worker") < workers:
            time.sleep(0.5)
        if log.read_text(errors="replace").count("Registering worker") < workers:
            raise RuntimeError(f"the standalone workers did not register within {timeout:.0f} s: see {folder / 'logs'}")
        yield Cluster(url, processes)
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=30)
