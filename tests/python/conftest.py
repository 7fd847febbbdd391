"""The one test harness: warehouses, the CLI, dbt results and the real data.

- `new_warehouse(folder)` is the one warehouse factory: a path in its own folder, so
  every dbt invocation on it writes its own target path (no shared `target/`).
- `hindsight(db, *args, expect=0)` is the one way to run the CLI: in a child process,
  as a user runs it (`in_process=True` runs it through click's CliRunner instead).
- `require_shared(...)` finds ../shared/data: a test skips with the reason when it is
  absent, and fails instead when HINDSIGHT_REQUIRE_DATA=1 (set by .ci/run).
- Markers (pyproject.toml): slow, real_data, browser. `make check` runs the rest.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from ingest.cli import main

PROJECT = Path(__file__).resolve().parents[2]
SHARED_DATA = PROJECT.parent / "shared" / "data"
DEMO = PROJECT / "ingest" / "demo" / "corpus"


def new_warehouse(folder: Path, name: str = "warehouse") -> Path:
    """A warehouse path in `folder` (not created: every command creates it on first use)."""
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}.duckdb"


def dbt_target(db: Path) -> Path:
    """Where dbt writes its artifacts for warehouse `db`: beside it, never the repository's target/."""
    return db.parent / f"{db.stem}.dbt-target"


def cli_env(db: Path, extra: dict | None = None) -> dict:
    return {**os.environ, "HINDSIGHT_DB": str(db), "DBT_TARGET_PATH": str(dbt_target(db)),
            "DBT_LOG_PATH": str(db.parent / f"{db.stem}.dbt-logs"), **(extra or {})}


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str = ""

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def hindsight(db: Path, *args, expect: int | None = 0, in_process: bool = False, env: dict | None = None) -> Done:
    """Run `hindsight ARGS` on warehouse `db` from the project root; assert its exit code unless expect is None."""
    if in_process:
        result = CliRunner().invoke(main, [str(a) for a in args], env=cli_env(db, env), catch_exceptions=False)
        done = Done(result.exit_code, result.output)
    else:
        run = subprocess.run([sys.executable, "-m", "ingest.cli", *map(str, args)], env=cli_env(db, env),
                             capture_output=True, text=True, cwd=PROJECT)
        done = Done(run.returncode, run.stdout, run.stderr)
    if expect is not None:
        assert done.returncode == expect, done.stdout[-5000:] + done.stderr[-3000:]
    return done


@pytest.fixture
def warehouse(tmp_path) -> Path:
    return new_warehouse(tmp_path)


@pytest.fixture
def cli(warehouse):
    """`hindsight` in process on this test's warehouse (fast: for loader and error-message tests)."""
    def invoke(*args, expect: int | None = 0) -> Done:
        return hindsight(warehouse, *args, expect=expect, in_process=True)
    return invoke


@pytest.fixture
def held(tmp_path):
    """A warehouse another process (a load, a BI tool) keeps open for writing, and that process."""
    db = new_warehouse(tmp_path)
    hindsight(db, "status", in_process=True)
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
                               "print('open', flush=True); sys.stdin.read()", str(db)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "open"
    yield db, holder
    if holder.poll() is None:
        holder.stdin.close()
        holder.wait(timeout=10)


def query(path: Path, sql: str, params=None) -> list[tuple]:
    """SQL on the warehouse, after what the runs stored beside it is brought in, as `hindsight build`
    first does (ingest/collect/ingest.py: exactly once, so a test reads the runs' rows where a build
    would put them)."""
    bring_in(path)
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def bring_in(path: Path) -> None:
    from ingest.collect.ingest import ingest
    from ingest.collect.store import store_path
    from ingest.db import connect

    if store_path(path).exists() and path.exists():
        with connect(path) as con:
            ingest(con, path)


def scalar(path: Path, sql: str, params=None):
    return query(path, sql, params)[0][0]


def write_jsonl(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def require_shared(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        reason = f"real data missing at {path}: put ../shared/data beside the project to run this test"
        if os.environ.get("HINDSIGHT_REQUIRE_DATA") == "1":
            pytest.fail(reason + " (HINDSIGHT_REQUIRE_DATA=1: CI runs every real-data test)")
        pytest.skip(reason)
    return path


def require_spark() -> None:
    """Skip (fail where HINDSIGHT_REQUIRE_SPARK=1, as in .ci/run) unless the spark extra and Java are here."""
    import importlib.util
    import shutil
    missing = [m for m in ("pyspark", "dbt.adapters.spark")
               if importlib.util.find_spec(m.split(".")[0]) is None or importlib.util.find_spec(m) is None]
    if missing or not shutil.which("java"):
        reason = f"Spark is not installed here ({', '.join(missing) or 'no java'}): pip install -e '.[spark]' and Java 17"
        if os.environ.get("HINDSIGHT_REQUIRE_SPARK") == "1":
            pytest.fail(reason + " (HINDSIGHT_REQUIRE_SPARK=1: CI runs the Spark tests)")
        pytest.skip(reason)


def require_inspect() -> None:
    """Skip (fail where HINDSIGHT_REQUIRE_INTEROP=1, as in .ci/run) unless the inspect extra is installed."""
    import importlib.util
    if importlib.util.find_spec("inspect_ai") is None:
        reason = "Inspect AI is not installed here: pip install -e '.[inspect]'"
        if os.environ.get("HINDSIGHT_REQUIRE_INTEROP") == "1":
            pytest.fail(reason + " (HINDSIGHT_REQUIRE_INTEROP=1: CI runs the interop tests)")
        pytest.skip(reason)


EEE_VERSION = "0.3.0"


def _python_at_least_312() -> str | None:
    """A Python >= 3.12 that runs: pyenv's installs first (its `python3.12` shim fails unless the
    version is selected), then the PATH's."""
    import shutil
    candidates = [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python3"))]
    candidates += [found for name in ("python3.12", "python3.13") if (found := shutil.which(name))]
    for python in candidates:
        done = subprocess.run([python, "-c", "import sys; print(sys.version_info >= (3, 12))"], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip() == "True":
            return python
    return None


@pytest.fixture(scope="session")
def eee_validate():
    """`every_eval_ever validate` from a Python 3.12 environment made once in .venv-eee (EEE needs
    Python >= 3.12; this project runs on 3.11). Skips without Python 3.12, fails where
    HINDSIGHT_REQUIRE_INTEROP=1."""
    venv = PROJECT / ".venv-eee"
    tool = venv / "bin" / "every_eval_ever"
    stamp = venv / f".installed-{EEE_VERSION}"
    if not stamp.exists():
        python = _python_at_least_312()
        if python is None:
            reason = "Python 3.12 is not here (every-eval-ever needs >= 3.12)"
            if os.environ.get("HINDSIGHT_REQUIRE_INTEROP") == "1":
                pytest.fail(reason + " (HINDSIGHT_REQUIRE_INTEROP=1)")
            pytest.skip(reason)
        subprocess.run([python, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", f"every-eval-ever=={EEE_VERSION}"],
                       check=True)
        stamp.touch()

    def validate(folder: Path, *paths: str) -> subprocess.CompletedProcess:
        """Validate PATHS (repository-relative, data/…) from FOLDER, as the datastore does; JSON report."""
        return subprocess.run([str(tool), "validate", "--format", "json", *paths], cwd=folder, capture_output=True, text=True)
    return validate


def dbt_results(db: Path) -> list[dict]:
    """Statuses of the nodes of the last dbt invocation on warehouse `db`."""
    return json.loads((dbt_target(db) / "run_results.json").read_text())["results"]


def assert_dbt_passed(db: Path) -> None:
    """Every node of the last dbt build on `db` passed (warn is allowed: data-quality thresholds on user data)."""
    bad = [(r["unique_id"], r["status"]) for r in dbt_results(db) if r["status"] not in ("success", "pass", "warn", "no-op")]
    assert not bad, bad


FAST_BUILD = ["--exclude", "resource_type:test", "resource_type:unit_test"]   # models only


@pytest.fixture(scope="module")
def requests_warehouse(tmp_path_factory):
    """The demo loaded and its models built (no tests), once per test module: what the runners ask."""
    from ingest.demo.run import load_demo

    db = new_warehouse(tmp_path_factory.mktemp("requests"))
    load_demo(db)
    hindsight(db, "build", *FAST_BUILD)
    return db


def warehouse_copy(source: Path, tmp_path: Path, monkeypatch, keys: dict[str, str | None]) -> Path:
    """A copy of SOURCE as HINDSIGHT_DB, with its published snapshots (where runs read their requests),
    with these API keys set (None: unset)."""
    copy = tmp_path / "w.duckdb"
    shutil.copy(source, copy)
    snapshots = source.parent / f"{source.stem}.marts.snapshots"
    if snapshots.is_dir():
        shutil.copytree(snapshots, tmp_path / f"{copy.stem}.marts.snapshots")
    monkeypatch.setenv("HINDSIGHT_DB", str(copy))
    for name, value in keys.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    return copy


@pytest.fixture(scope="session")
def demo_warehouse(tmp_path_factory):
    """`hindsight demo` once per session: (warehouse, its output, the report's index.html)."""
    db = new_warehouse(tmp_path_factory.mktemp("demo"))
    reports = db.parent / "reports"
    done = hindsight(db, "demo", "--report-dir", reports)
    assert_dbt_passed(db)
    return db, done.stdout, reports / "index.html"


# any slice of the metrics against the marts' cuts (test_slices.py on the demo, test_metrics_independent.py
# on the real data)
METRICS = ["acc", "htr", "delta_acc", "delta_htr", "air", "hbr"]
STATS = ["estimate", "ci_low", "ci_high", "se_clustered", "n_questions", "n_cases", "n_valid"]
# how far to trust each interval: the marts and the slices flag the same cells in the same words
FLAGS = ["few_cases", "caution"]
# the marts' cuts: (mart, its slice columns, the same dimensions by their semantic names)
CUTS = [("agg_metrics", [], []),
        ("agg_metrics_by_format", ["format", "options_type"], ["question__format", "question__options_type"]),
        ("agg_metrics_by_eval_target", ["eval_target"], ["question__eval_target"])]
CELL = ["cohort", "model", "condition", "prompt_variant", "visibility"]
SEMANTIC_CELL = ["case__cohort", "model", "condition", "answer__prompt_variant", "answer__visibility"]


def assert_slice_equals_mart(sliced: pd.DataFrame, mart: pd.DataFrame, columns: list[str], semantic: list[str]) -> int:
    """Every cell of MART in SLICED with the same statistics (1e-12), none of a 1-case cell's interval
    or SE in either (the slice states why), and the same few-cases flags and cautions where MART has
    them. Returns the cells compared."""
    renamed = sliced.rename(columns=dict(zip(semantic, columns)))
    # cells whose questions have no value of the metric: the marts leave them out, the slice states why
    empty = renamed["n_questions"] == 0
    assert renamed.loc[empty, "reason"].str.startswith("no question").all() and renamed.loc[empty, "estimate"].isna().all()
    renamed = renamed[~empty]
    keys = ["metric", *columns]
    merged = mart.merge(renamed, on=keys, how="outer", suffixes=("_mart", ""), indicator=True)
    assert (merged["_merge"] == "both").all(), merged.loc[merged["_merge"] != "both", keys + ["_merge"]].head(10)
    for stat in STATS:
        expected, got = merged[f"{stat}_mart"].to_numpy(dtype=float), merged[stat].to_numpy(dtype=float)
        assert np.allclose(got, expected, atol=1e-12, rtol=0, equal_nan=True), stat
    for flag in FLAGS:
        if f"{flag}_mart" in merged:
            differ = merged[flag].fillna("-").astype(str) != merged[f"{flag}_mart"].fillna("-").astype(str)
            assert not differ.any(), merged.loc[differ, keys + [flag, f"{flag}_mart"]].head(5)
    single = merged[merged["n_cases"] == 1]
    assert single["ci_low"].isna().all() and single["se_clustered"].isna().all() and single["reason"].str.startswith("1 case").all()
    assert single["few_cases"].all() and single["caution"].str.startswith("1 case").all()
    return len(merged)


def metricflow(db: Path, *args: str) -> subprocess.CompletedProcess:
    """`mf ARGS` on warehouse DB. MetricFlow reads the semantic manifest from the project root's
    target/ (its path is fixed there), and the manifest names the warehouse's database: `dbt parse`
    writes it for DB first, unless it is DB's already. Two test workers share that file, so the parse
    and the query hold a lock together."""
    import fcntl

    target = PROJECT / "target"
    target.mkdir(exist_ok=True)
    parsed_for = target / ".metricflow-warehouse"
    with open(target / ".metricflow.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not parsed_for.exists() or parsed_for.read_text() != str(db):
            parse = subprocess.run([os.path.join(os.path.dirname(sys.executable), "dbt"), "parse", "--project-dir",
                                    str(PROJECT), "--profiles-dir", str(PROJECT)], cwd=PROJECT, capture_output=True, text=True,
                                   env={**cli_env(db), "DBT_TARGET_PATH": str(target), "DBT_LOG_PATH": str(db.parent / "mf-logs")})
            assert parse.returncode == 0, parse.stdout[-3000:]
            parsed_for.write_text(str(db))
        mf = os.path.join(os.path.dirname(sys.executable), "mf")
        return subprocess.run([mf, *args], cwd=PROJECT, env=cli_env(db), capture_output=True, text=True, timeout=600)


def metricflow_estimates(db: Path, out: Path) -> pd.DataFrame:
    """`mf query` of the six metrics by agg_metrics' cell on warehouse DB: (metric, CELL..., estimate)."""
    done = metricflow(db, "query", "--metrics", ",".join(METRICS), "--group-by", ",".join(SEMANTIC_CELL), "--csv", str(out))
    assert done.returncode == 0 and out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    answered = pd.read_csv(out, dtype={"condition": str}).rename(columns=dict(zip(SEMANTIC_CELL, CELL)))
    return answered.melt(id_vars=CELL, value_vars=METRICS, var_name="metric", value_name="estimate").dropna()


# fixtures that mean a test reads ../shared/data, or builds a whole warehouse first
REAL_DATA_FIXTURES = {"real_warehouse", "audit", "unseen", "release"}
SLOW_FIXTURES = {"demo_warehouse"} | REAL_DATA_FIXTURES


def pytest_collection_modifyitems(config, items):
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & REAL_DATA_FIXTURES:
            item.add_marker(pytest.mark.real_data)
        if used & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)
