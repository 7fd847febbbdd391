"""The marts built on Apache Spark equal DuckDB's (issues 34, 42), through `hindsight build --target
spark`, on one catalog: the demo corpus beside the shared T2S2 files and the shared HindsightBench
release, built in-process and killed at a random point, then completed, appended to and recomputed by
each interval method behind a real Spark Connect server started here on 127.0.0.1 over the same
catalog folder (ingest/spark/server.py).

Compared: every public mart of both protocols, row for row; counts, labels and scores exactly,
estimates and intervals within 1e-9. Left out of the comparison, by nature: the times a build wrote
(scored_at, scored_through, built_at, dbt_invocation_id, computed_at) and the engines' own hashes
(fct_answers.comparison_hash, agg_pair_coverage.requests_signature, the HindsightBench steps'
input_fingerprint), which only compare within an engine. The DuckDB side draws the validation table's bootstrap the way SQL can (`warehouse`).
Needs the spark extra and Java 17 (HINDSIGHT_REQUIRE_SPARK=1 fails instead of skipping)."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from spark_sql import run_spark_sql
from test_real_data import load_real_cohorts

from conftest import PROJECT, bring_in, cli_env, dbt_target, hindsight, new_warehouse, query, require_shared, require_spark
from ingest.spark.server import connect_server

pytestmark = pytest.mark.slow

def with_vars(**extra) -> list[str]:
    return ["--vars", json.dumps({"validation_bootstrap_draws": "warehouse", **extra})]


WAREHOUSE_VARS = with_vars()
# DuckDB's data tests run elsewhere in the suite, and Spark's in the T2S2 build: not again
NO_TESTS = ["--exclude", "resource_type:test", "resource_type:unit_test"]
BUILD_TIMES = {"scored_at", "scored_through", "built_at", "dbt_invocation_id", "computed_at"}
ENGINE_HASHES = {"comparison_hash", "requests_signature", "input_fingerprint"}
# the facts Spark partitions by model (macro fact_config)
PARTITIONED = ["intermediate.int_answers_scored", "intermediate.int_response_provenance", "intermediate.int_answer_pairs",
               "intermediate.int_metric_case_sums", "intermediate.int_metric_estimates",
               "intermediate.int_metric_estimates_by_eval_target"]

# the public marts published a partition per model (meta publish_partition_by), in the order published
PUBLISHED_BY_MODEL = ["fct_answer_pairs", "fct_answer_texts", "fct_answers", "fct_judgment_requests", "fct_judgments",
                      "fct_metric_parts"]


def public_marts(db: Path) -> list[str]:
    """The marts of warehouse DB, both protocols'."""
    return [name for (name,) in query(db, """select table_name from information_schema.tables
                                            where table_schema = 'main' and table_name not like '%dbt_tmp%' order by 1""")]


def spark_build(db: Path, server, *args, expect: int = 0):
    return hindsight(db, "build", "--target", "spark", *args, expect=expect,
                     env={"HINDSIGHT_SPARK_REMOTE": server.url, "HINDSIGHT_LANDING": str(db.parent / "landing"),
                          "DBT_TARGET_PATH": str(dbt_target(db)) + "-spark"})


def read_spark(server, names: list[str], out: Path) -> dict[str, pd.DataFrame]:
    """NAMES from a Connect SERVER, or from the catalog folder an in-process build wrote (a path)."""
    where = server if isinstance(server, str) else server.url
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("spark_marts.py")), where, str(out), *names],
                          capture_output=True, text=True, cwd=PROJECT)
    assert done.returncode == 0, done.stderr[:3000]
    return {name: pd.read_parquet(out / f"{name.replace('.', '__')}.parquet") for name in names}


def read_marts_and_serving(server, marts: list[str], out: Path) -> tuple[dict, dict]:
    """MARTS and their serving views, each by mart name."""
    both = read_spark(server, marts + [f"serving.{m}" for m in marts], out)
    return {m: both[m] for m in marts}, {m: both[f"serving.{m}"] for m in marts}


def differences(db: Path, spark: dict[str, pd.DataFrame]) -> dict[str, list[str]]:
    """Per mart, what differs between DuckDB's table and Spark's (an empty dict: equal)."""
    found = {}
    with duckdb.connect(str(db), read_only=True) as con:
        for name, theirs in spark.items():
            mine = con.execute(f"select * from main.{name}").df()
            problems = []
            if list(mine.columns) != list(theirs.columns):
                problems.append(f"columns {list(mine.columns)} vs {list(theirs.columns)}")
            elif len(mine) != len(theirs):
                problems.append(f"{len(mine)} rows vs {len(theirs)}")
            else:
                problems += _row_differences(mine, theirs)
            if problems:
                found[name] = problems
    return found


def _row_differences(mine: pd.DataFrame, theirs: pd.DataFrame) -> list[str]:
    compared = [c for c in mine.columns if c not in BUILD_TIMES | ENGINE_HASHES]
    numeric = [c for c in compared if pd.api.types.is_float_dtype(mine[c]) or pd.api.types.is_float_dtype(theirs[c])]
    keys = [c for c in compared if c not in numeric]
    # ordered by every exact column, then the numbers rounded (ties of the exact columns)
    def ordered(frame):
        frame = frame[compared].copy()
        for c in numeric:
            frame[f"_{c}"] = frame[c].astype(float).round(6)
        by = keys + [f"_{c}" for c in numeric]
        return frame.sort_values(by, kind="stable", na_position="first").reset_index(drop=True) if by else frame
    a, b = ordered(mine), ordered(theirs)
    problems = []
    for c in compared:
        left, right = a[c], b[c]
        if c in numeric:
            both_null = left.isna() & right.isna()
            close = (left.astype(float) - right.astype(float)).abs() <= 1e-9
            bad = ~(both_null | close)
        else:
            bad = ~((left.astype(str) == right.astype(str)) | (left.isna() & right.isna()))
        if bad.any():
            at = bad.idxmax()
            problems.append(f"{c}: {int(bad.sum())} rows differ, e.g. {left[at]!r} vs {right[at]!r}")
    return problems


def one_data_test_of_each_kind(db: Path) -> list[str]:
    """The first generic data test of each kind (unique, not_null, the project's own …) that dbt's
    manifest of DB's last build holds: each test macro's Spark dispatch runs once."""
    first = {}
    for node in sorted(json.loads((dbt_target(db) / "manifest.json").read_text())["nodes"].values(),
                       key=lambda node: node["unique_id"]):
        if node["resource_type"] == "test" and node.get("test_metadata"):
            first.setdefault(node["test_metadata"]["name"], node["name"])
    assert {"unique", "not_null", "accepted_values", "newest_keys_unique", "unique_combination_of_columns"} <= set(first)
    return sorted(first.values())


def partition_files(server, table: str) -> dict[str, set[tuple[str, int]]]:
    """Per partition folder (model=…) of TABLE in the server's warehouse: its data files and their mtimes."""
    schema, name = table.split(".")
    folder = server.folder / "warehouse" / f"{schema}.db" / name
    return {part.name: {(f.name, f.stat().st_mtime_ns) for f in part.glob("*.parquet")}
            for part in sorted(folder.glob("model=*"))}


def store_partitions(server, mart: str, store: str | None = None) -> dict[str, set[tuple[str, int]]]:
    """Per partition folder of partitioned mart MART's serving store (serving_parts.<mart>_<columns>,
    the only one; or STORE): its data files and their mtimes."""
    stores = [folder for folder in (server.folder / "warehouse" / "serving_parts.db").glob(f"{mart}_*")
              if folder.name[len(mart) + 1:].isalnum() and store in (None, folder.name)]
    assert len(stores) == 1, stores
    return {part.name: {(f.name, f.stat().st_mtime_ns) for f in part.glob("*.parquet")}
            for part in sorted(stores[0].glob("publish_part=*"))}


def table_files(server, table: str) -> set[tuple[str, int]]:
    schema, name = table.split(".")
    return {(str(f.relative_to(server.folder)), f.stat().st_mtime_ns)
            for f in (server.folder / "warehouse" / f"{schema}.db" / name).rglob("*.parquet")}


def started(db: Path, *args, env: dict | None = None) -> subprocess.Popen:
    """`hindsight ARGS` on warehouse DB in the background (see finished)."""
    return subprocess.Popen([sys.executable, "-m", "ingest.cli", *map(str, args)], env=cli_env(db, env), cwd=PROJECT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finished(run: subprocess.Popen) -> str:
    output = run.communicate()[0]
    assert run.returncode == 0, output[-5000:]
    return output


def same_raw_rows(db: Path, spark_side: Path) -> None:
    """Give warehouse SPARK_SIDE the raw rows of DB (not their build ledgers): the two sides then build
    the same data at once, DuckDB's in DB and Spark's from SPARK_SIDE's landing zone. What the runs
    stored beside DB is brought into it first, as its own build would."""
    bring_in(db)
    with duckdb.connect(str(spark_side)) as con:
        con.execute(f"attach '{db}' as source (read_only)")
        for (table,) in con.execute("""select table_name from information_schema.tables where table_catalog = 'source'
                                       and table_schema = 'raw' and table_name not in ('builds', 'spark_builds')""").fetchall():
            con.execute(f"delete from raw.{table}")
            con.execute(f"insert into raw.{table} select * from source.raw.{table}")


def test_spark_builds_both_protocols_equal_to_duckdb_through_a_killed_build_an_append_and_each_interval_method(
        demo_warehouse, tmp_path):
    """One catalog, built the ways a user builds it: in-process (killed at a random point), then behind a
    Spark Connect server that completes the build, appends a model and recomputes the intervals by the
    other two methods. One full build serves every check: the Spark tests' time in CI is that of one.
    DuckDB builds the same raw rows in a warehouse of its own meanwhile (one writer per DuckDB file)."""
    require_spark()
    release = require_shared("hindsightbench")
    db = new_warehouse(tmp_path / "duckdb")
    shutil.copy(demo_warehouse[0], db)
    load_real_cohorts(db)                                   # beside the demo: the shared T2S2 files ...
    hindsight(db, "load", "hindsightbench", release)        # ... and the four published HindsightBench rows
    sdb = new_warehouse(tmp_path / "spark")                 # the Spark side's raw rows, landing zone and ledger
    shutil.copy(db, sdb)
    catalog = tmp_path / "catalog"
    env = {"HINDSIGHT_SPARK_WAREHOUSE": str(catalog), "HINDSIGHT_LANDING": str(sdb.parent / "landing"),
           "DBT_TARGET_PATH": str(dbt_target(sdb)) + "-spark"}
    duckdb_build = started(db, "build", "--all", *WAREHOUSE_VARS, *NO_TESTS)
    # plain dbt has no session with the table functions: it stops at its start and says what to run
    dbt = Path(sys.executable).parent / "dbt"
    plain = subprocess.Popen([str(dbt), "run", "--target", "spark", "--select", "int_metric_cells"], cwd=PROJECT,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=cli_env(new_warehouse(tmp_path / "plain"),
                                         {"HINDSIGHT_SPARK_WAREHOUSE": str(tmp_path / "plain" / "catalog"),
                                          "HINDSIGHT_LANDING": str(tmp_path / "plain" / "landing")}))

    # in-process (local[2], the catalog beside the warehouse), killed with its JVM mid-build
    after = random.Random().uniform(30, 60)              # dbt starts after the export and the JVM, ~25 s
    killed = subprocess.Popen([sys.executable, "-m", "ingest.cli", "build", "--target", "spark"], cwd=PROJECT,
                              env={**os.environ, "HINDSIGHT_DB": str(sdb), **env}, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        killed.wait(timeout=after)
        pytest.fail(f"the build ended before it was killed at {after:.0f} s: {killed.stderr.read()[-2000:]}")
    except subprocess.TimeoutExpired:
        os.killpg(killed.pid, signal.SIGKILL)          # the build, dbt and Spark's JVM, mid-write
        killed.wait()
    assert plain.wait() != 0
    assert "only `hindsight build --target spark` registers: run that" in plain.communicate()[0]
    finished(duckdb_build)
    marts = public_marts(db)

    with connect_server(catalog) as server:             # the same catalog folder, now a server's
        resumed = spark_build(sdb, server, *WAREHOUSE_VARS, *NO_TESTS)
        assert "landing zone" in resumed.stderr and "target spark_connect" in resumed.stderr
        assert "building everything on Spark (no earlier build recorded)" in resumed.stderr
        # every kind of check on the built catalog: the unit tests and equivalence checks a refresh leaves
        # out, and one data test of each generic kind (the data they would test is compared row for row
        # below). `dbt test`: dbt build runs no unit test of a model it does not build
        checks = subprocess.run([sys.executable, "-m", "ingest.spark.dbt_on_spark", "test", "--project-dir", str(PROJECT),
                                 "--profiles-dir", str(PROJECT), "--target", "spark_connect", *WAREHOUSE_VARS, "--select",
                                 "resource_type:unit_test", "test_type:singular", *one_data_test_of_each_kind(db)],
                                cwd=PROJECT, capture_output=True, text=True,
                                env=cli_env(sdb, {**env, "HINDSIGHT_SPARK_REMOTE": server.url, "PYSPARK_PYTHON": sys.executable}))
        assert checks.returncode == 0, checks.stdout[-3000:]
        ran = json.loads((Path(env["DBT_TARGET_PATH"]) / "run_results.json").read_text())["results"]
        kinds = [r["unique_id"].split(".")[0] for r in ran]
        assert 10 < kinds.count("test") < 30 and kinds.count("unit_test") > 15 and "model" not in kinds, kinds
        # the marts, and readers' views (serving.<mart>) over the build's snapshot tables, in one client
        spark, served = read_marts_and_serving(server, marts, tmp_path / "first")
        assert differences(db, spark) == {}, f"killed at {after:.0f} s"
        assert differences(db, served) == {}
        assert len(spark["agg_metrics"]) > 100 and spark["agg_validation"]["ci_low"].notna().any()
        assert set(spark["agg_metrics"]["ci_method"]) == {"percentile"}
        # the few-cases flags on Spark as on DuckDB (compared above); these data have no one-case cell, so the
        # macro's unit test, which ran on Spark above, holds that one has no interval or SE there either
        metric_marts = [spark[m] for m in ("agg_metrics", "agg_metrics_by_format", "agg_metrics_by_eval_target")]
        assert all((m["few_cases"] == m["caution"].notna()).all() and m["few_cases"].any() for m in metric_marts)
        assert any(r["unique_id"].endswith("intervals_over_few_cases_are_flagged_and_one_case_has_none") and r["status"] == "pass"
                   for r in ran)
        # the TTS classifier's regexes ran on Spark over the shared files, quarantined records included
        assert set(spark["agg_tts_quality"]["cohort"]) >= {"sepsis10", "sepsis40", "sepsis100"}
        # HindsightBench's parsers and estimators ran on the executors: the published rows beside the
        # demo's simulated audits, their robustness evidence and every request the audit would send
        assert {"claude-haiku-4-5", "gpt-5.4-mini", "llama-3.1-70b-awq", "qwen3.6-27b-fp8"} < set(spark["agg_hb_audit_rows"]["model_key"])
        assert len(spark["agg_hb_window_perturbation"]) > 100 and len(spark["fct_hb_requests"]) > 20000
        before = {table: partition_files(server, table) for table in PARTITIONED}
        assert all(len(parts) == 4 for parts in before.values()), {t: list(p) for t, p in before.items()}
        audit = table_files(server, "main.agg_hb_audit_rows")
        assert audit
        # the answer-level marts' snapshot: a partition per model, in their stores
        published = {mart: store_partitions(server, mart) for mart in PUBLISHED_BY_MODEL}
        assert all(len(parts) == 4 for parts in published.values()), {m: list(p) for m, p in published.items()}

        # a fifth model answers the questions: only its partitions are written (the T2S2 questions, loaded
        # after the demo's answers and answered by no other model, touch no other model's partitions)
        hindsight(db, "answer", "--model", "sim:hindsight@0.45", "--concurrency", "4")
        same_raw_rows(db, sdb)
        duckdb_build = started(db, "build", *WAREHOUSE_VARS, *NO_TESTS)
        again = spark_build(sdb, server, *WAREHOUSE_VARS, *NO_TESTS)
        assert "landing zone" in again.stderr and " 0 load partitions" not in again.stderr     # the new answers' load
        # planned as a DuckDB build: what the new answers touch, not the HindsightBench audit
        assert "loaded since the last build: " in again.stderr and "refreshing what depends on it on Spark" in again.stderr
        assert table_files(server, "main.agg_hb_audit_rows") == audit
        for table in PARTITIONED:
            after_append = partition_files(server, table)
            assert set(after_append) == set(before[table]) | {"model=sim%3Ahindsight@0.45"}, table
            assert {part: after_append[part] for part in before[table]} == before[table], f"{table}: another model was rewritten"
        # ... and the publish wrote one partition per answer-level mart, each earlier one as it was
        for mart in PUBLISHED_BY_MODEL:
            after_append = store_partitions(server, mart)
            assert len(set(after_append) - set(published[mart])) == 1, mart
            assert {part: after_append[part] for part in published[mart]} == published[mart], f"{mart}: another model was rewritten"
        assert "partitions written: " + ", ".join(f"{mart} 1 of 5" for mart in PUBLISHED_BY_MODEL) in again.stdout + again.stderr
        finished(duckdb_build)
        spark, served = read_marts_and_serving(server, marts, tmp_path / "appended")
        assert differences(db, spark) == {}
        assert differences(db, served) == {}
        # what no snapshot reads goes at the next publish: a partition of a store, and a store
        store = next((server.folder / "warehouse" / "serving_parts.db").glob("fct_answers_*")).name
        read = store_partitions(server, "fct_answers")
        unread = "0" * 32
        run_spark_sql(server, f"insert into serving_parts.{store} partition (publish_part = '{unread}') select * from main.fct_answers limit 1",
                      f"create table serving_parts.fct_answers_{unread[:12]} using parquet partitioned by (publish_part) "
                      f"as select *, '{unread}' as publish_part from main.fct_answers limit 1")
        assert f"publish_part={unread}" in store_partitions(server, "fct_answers", store)
        # `dbt run-operation publish_snapshot` publishes the catalog as it stands: no partition is
        # written again, and the planted store and partition are gone
        republished = subprocess.run([sys.executable, "-m", "ingest.spark.dbt_on_spark", "run-operation", "publish_snapshot",
                                      "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT), "--target", "spark_connect"],
                                     cwd=PROJECT, capture_output=True, text=True,
                                     env=cli_env(sdb, {**env, "HINDSIGHT_SPARK_REMOTE": server.url, "PYSPARK_PYTHON": sys.executable}))
        assert republished.returncode == 0, republished.stdout[-3000:]
        assert "partitions written: " + ", ".join(f"{mart} 0 of 5" for mart in PUBLISHED_BY_MODEL) in republished.stdout
        assert store_partitions(server, "fct_answers") == read
        served = read_spark(server, [f"serving.{m}" for m in PUBLISHED_BY_MODEL], tmp_path / "republished")
        assert differences(db, {m: served[f"serving.{m}"] for m in PUBLISHED_BY_MODEL}) == {}

        # the other two interval methods, each over one of the two estimators (one implementation serves
        # both), on both engines from the same draws; bca in blocks of 5 cells and 400 replicates on Spark
        # (test_bootstrap.py holds any two block settings equal to the bit)
        for method, estimator, estimates, blocks in [
                ("bca", "int_metric_estimates+", ["agg_metrics", "agg_metrics_by_format"],
                 {"bootstrap_cells_per_block": 5, "bootstrap_replicates_per_block": 400}),
                ("studentized", "int_metric_estimates_by_eval_target+", ["agg_metrics_by_eval_target"], {})]:
            duckdb_build = started(db, "build", "--select", estimator, *NO_TESTS, *with_vars(ci_method=method))
            spark_build(sdb, server, "--select", estimator, *NO_TESTS, *with_vars(ci_method=method, **blocks))
            finished(duckdb_build)
            spark = read_spark(server, estimates, tmp_path / method)
            assert all(set(frame["ci_method"]) == {method} for frame in spark.values()), method
            assert differences(db, spark) == {}, method


def test_a_mart_that_differs_is_reported(tmp_path):
    """The comparison can fail: a changed score, a missing row and a changed label are each found."""
    db = new_warehouse(tmp_path)
    with duckdb.connect(str(db)) as con:
        con.execute("create table main.m as select * from (values ('a', 1, 0.5), ('b', 2, 0.25)) as t (label, n, value)")
        frame = con.execute("select * from main.m").df()
    assert differences(db, {"m": frame}) == {}
    changed = frame.copy()
    changed.loc[1, "value"] = 0.25 + 1e-6
    assert "value" in differences(db, {"m": changed})["m"][0]
    assert "rows" in differences(db, {"m": frame.iloc[:1]})["m"][0]
    relabelled = frame.copy()
    relabelled.loc[0, "label"] = "c"
    assert differences(db, {"m": relabelled})
