"""Readers and refreshes never wait for each other (issue 40): every successful build publishes the
public marts as a snapshot, and readers query the serving file over the current one.

The main test runs three builds (an incremental `hindsight build`, a `hindsight build --all` killed
mid-way, a plain `dbt build`) while a reader opens a connection per query (as Superset does),
another holds a SQLAlchemy QueuePool connection throughout, and a third runs a 30-second query
across a build's start; no query fails, each result is one published build's, a build's marts are
visible as soon as it ends, the killed build's never, and the snapshot equals the warehouse row for
row after every build."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest
from serving_readers import QUERIES

from conftest import PROJECT, cli_env, hindsight, new_warehouse
from ingest.build import dbt_executable
from ingest.db import connect, serve_path
from ingest.publish.marts import public_marts
from ingest.serve import snapshots

READERS = Path(__file__).with_name("serving_readers.py")
BUSY = "in use by another process"


def snapshot_results(warehouse: Path, snapshot: snapshots.Snapshot) -> dict[str, list]:
    """What each reader query returns on one snapshot, computed from its files through the serving views' SQL."""
    views = snapshots.serving_views(warehouse, snapshot.manifest["marts"], pinned=snapshot.id)
    con = duckdb.connect()
    for mart, sql in views.items():
        con.execute(f'create view "{mart}" as {sql}')
    return {name: [list(row) for row in con.execute(sql).fetchall()] for name, sql in QUERIES.items()}


def assert_snapshot_equals_warehouse(warehouse: Path) -> None:
    """Every public mart of the serving file equals the warehouse's, row for row and type for type."""
    con = duckdb.connect()
    con.execute(f"attach '{warehouse}' as w (read_only)")
    con.execute(f"attach '{serve_path(warehouse)}' as s (read_only)")
    for mart in public_marts():
        types = [con.execute("select column_name, data_type from information_schema.columns where table_catalog = ? "
                             "and table_schema = 'main' and table_name = ? order by ordinal_position", [side, mart]).fetchall()
                 for side in ("w", "s")]
        assert types[0] and types[0] == types[1], mart
        counts = [con.execute(f"select count(*) from {side}.main.{mart}").fetchone()[0] for side in ("w", "s")]
        differ = con.execute(f"select count(*) from (select * from w.main.{mart} except all select * from s.main.{mart})").fetchone()[0]
        assert counts[0] == counts[1] and differ == 0, (mart, counts, differ)


def start_build(db: Path, *command: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen(list(command), cwd=PROJECT, env=cli_env(db, env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def finish(build: subprocess.Popen) -> tuple[int, str, float]:
    output, _ = build.communicate(timeout=900)
    return build.returncode, output, time.time()


def files_read(con: duckdb.DuckDBPyConnection, sql: str, profile: Path) -> tuple[int, set[str]]:
    """How many Parquet files a query opened, and the names DuckDB's profile of it lists (the first
    few, then "...")."""
    con.execute("set enable_profiling = 'json'")
    con.execute(f"set profiling_output = '{profile}'")
    con.execute(sql).fetchall()
    con.execute("set enable_profiling = 'no_output'")

    def scans(node: dict):
        if node.get("name") == "READ_PARQUET":
            yield node["extra_info"]
        for child in node.get("children", []):
            yield from scans(child)
    found = [info for node in json.loads(profile.read_text())["operator"] for info in scans(node)]
    return (sum(int(info["Total Files Read"]) for info in found),
            {name for info in found for name in info["Filename(s)"].split(", ") if name != "..."})


def assert_reads_the_current_slot_only(warehouse: Path, mart: str, sql: str, profile: Path) -> None:
    """SQL through the serving file opens MART's files in the slot the pointer names, and no other
    slot's, however many slots live/ holds: the query costs what one snapshot does."""
    slots = snapshots.live_slots(warehouse, mart)
    assert len(slots) >= 3
    slot = snapshots._pointer(snapshots.snapshots_root(warehouse))[1]
    with duckdb.connect(str(serve_path(warehouse)), read_only=True) as con:
        count, names = files_read(con, sql, profile)
    assert count == len(slots[slot]) and names and {Path(name).parent for name in names} == {
        snapshots.slot_folder(snapshots.snapshots_root(warehouse) / snapshots.LIVE, mart, slot)}, (count, names)


@pytest.mark.slow
def test_readers_never_fail_nor_see_half_a_build_while_builds_run(demo_warehouse, tmp_path):
    db = new_warehouse(tmp_path / "served")
    shutil.copy(demo_warehouse[0], db)
    env = {snapshots.KEEP_ENV: "10"}
    # a warehouse built before it had a snapshot: the next build publishes the one it has
    hindsight(db, "build", env=env)
    published = [snapshots.current(db)]
    assert published[0] is not None
    assert_snapshot_equals_warehouse(db)
    serve, stop, logs = serve_path(db), tmp_path / "stop", tmp_path / "readers"
    logs.mkdir()
    readers = [subprocess.Popen([sys.executable, str(READERS), kind, str(serve), str(logs / f"{kind}.jsonl"), str(stop)],
                                cwd=PROJECT) for kind in ("per-query", "pooled")]
    slow = subprocess.Popen([sys.executable, str(READERS), "slow", str(serve), str(logs / "slow.jsonl"), "30"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=PROJECT)
    ends = {}
    try:
        time.sleep(2)
        # 1. a new model's answers, then `hindsight build` (incremental)
        hindsight(db, "answer", "--model", "sim:noise@0.5", "--variant", "standard")
        code, output, ends[1] = finish(start_build(db, sys.executable, "-m", "ingest.cli", "build", env=env))
        assert code == 0 and BUSY not in output, output[-3000:]
        published.append(snapshots.current(db))
        assert published[1].id != published[0].id
        assert_snapshot_equals_warehouse(db)
        # 2. another model's answers, and a build killed mid-way: it publishes nothing
        hindsight(db, "answer", "--model", "sim:noise@0.35", "--variant", "standard")
        killed = start_build(db, sys.executable, "-m", "ingest.cli", "build", "--all", env=env)
        time.sleep(25)
        assert killed.poll() is None, "the build ended before it could be killed"
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
        assert snapshots.current(db).id == published[1].id
        # 3. a plain `dbt build`, started while a 30-second query runs
        assert slow.stdout.readline().strip() == "ready"
        slow.stdin.write("go\n")
        slow.stdin.flush()
        time.sleep(1)
        code, output, ends[3] = finish(start_build(db, dbt_executable(), "build", "--project-dir", str(PROJECT),
                                                   "--profiles-dir", str(PROJECT), env=env))
        assert code == 0 and BUSY not in output and "Could not set lock" not in output, output[-3000:]
        published.append(snapshots.current(db))
        assert published[2].id not in {p.id for p in published[:2]}
        assert_snapshot_equals_warehouse(db)
        time.sleep(2)
    finally:
        stop.touch()
        for reader in readers:
            reader.wait(timeout=60)
        slow.wait(timeout=120)

    assert [s.id for s in snapshots.snapshots(db)] == [p.id for p in published]     # the killed build left nothing
    expected = {p.id: snapshot_results(db, p) for p in published}
    assert len({json.dumps(e["metrics"]) for e in expected.values()}) == 3, "the builds must differ for the test to tell them apart"
    records = [json.loads(line) | {"reader": path.stem} for path in logs.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert {r["reader"] for r in records} == {"per-query", "pooled", "slow"}
    failed = [r for r in records if r["error"]]
    assert failed == [], failed[:3]
    by_build = {}
    for r in records:
        # every result is exactly one published build's, and the build current when the query started or later
        matches = [i for i, p in enumerate(published) if expected[p.id][r["query"]] == r["result"]]
        assert matches, r
        by_build.setdefault(r["reader"], set()).update(matches)
        newest_at_start = sum(1 for build, end in ends.items() if end + 1 <= r["started"])
        assert max(matches) >= newest_at_start, ("a build's marts were not visible 1 s after it ended", r, ends)
    assert by_build["per-query"] >= {0, 1, 2} and by_build["pooled"] >= {0, 1, 2}, by_build
    slow_record = next(r for r in records if r["reader"] == "slow")
    assert slow_record["ended"] - slow_record["started"] >= 25 and expected[published[1].id]["metrics"] == slow_record["result"]
    # after three publishes (four slots in live/), answers per model and condition through the
    # serving file open the current slot's fct_answers files only
    assert_reads_the_current_slot_only(db, "fct_answers", "select model, condition, avg(acc) from fct_answers group by all",
                                       tmp_path / "profile.json")


def snapshot_files(warehouse: Path) -> dict[str, dict]:
    """Per mart, the inodes of its files in the current snapshot (a linked file keeps its inode): by
    partition value for a mart published a file per model, else under ''."""
    now = snapshots.current(warehouse)
    files = {}
    for mart, entry in now.manifest["marts"].items():
        parts = entry.get("partitions")
        files[mart] = ({part["value"]: [(now.path / snapshots.mart_file(mart, now.id, name)).stat().st_ino for name in part["files"]]
                        for part in parts} if entry.get("partition_by")
                       else {"": (now.path / snapshots.mart_file(mart, now.id)).stat().st_ino})
    return files


BY_MODEL = {"fct_answers", "fct_answer_pairs", "fct_answer_texts", "fct_judgment_requests", "fct_judgments", "fct_metric_parts"}


@pytest.mark.slow
def test_a_snapshot_writes_the_marts_its_build_changed_and_links_the_others(demo_warehouse, tmp_path):
    db = new_warehouse(tmp_path / "linked")
    shutil.copy(demo_warehouse[0], db)
    hindsight(db, "build")
    first = snapshot_files(db)
    assert len(first) == len(public_marts())
    assert {mart for mart, entry in snapshots.current(db).manifest["marts"].items() if entry.get("partition_by")} == BY_MODEL
    # a new model's answers: the clinical marts they reach are written, HindsightBench's are the same
    # files, and of the answer-level facts only the new model's partition is
    hindsight(db, "answer", "--model", "sim:noise@0.5", "--variant", "standard")
    appended = hindsight(db, "build")
    second = snapshot_files(db)
    written = {mart for mart in second if second[mart] != first[mart]}
    assert {"fct_answers", "agg_metrics", "dim_build"} <= written
    assert not {mart for mart in written if mart.startswith(("agg_hb_", "fct_hb_"))}
    assert f"({len(written)} written, {len(second) - len(written)} as in the last snapshot)" in appended.stdout + appended.stderr
    for mart in BY_MODEL - {"fct_judgment_requests"}:   # the demo has free responses, judged by a simulator
        assert "sim:noise@0.5" in second[mart] and "sim:noise@0.5" not in first[mart], mart
        assert {model: second[mart][model] for model in first[mart]} == first[mart], mart
    assert_snapshot_equals_warehouse(db)
    # more answers of that model: its partitions are written again, every other model's linked
    hindsight(db, "answer", "--model", "sim:noise@0.5", "--variant", "warning")
    hindsight(db, "build")
    again = snapshot_files(db)
    for mart in ("fct_answers", "fct_answer_pairs", "fct_answer_texts", "fct_metric_parts"):
        assert again[mart]["sim:noise@0.5"] != second[mart]["sim:noise@0.5"], mart
        assert {model: files for model, files in again[mart].items() if model != "sim:noise@0.5"} == first[mart], mart
    assert_snapshot_equals_warehouse(db)
    # a run that did not publish (publishing off, as after a failure or a kill): the next publish writes
    # every mart, but for the partitions of the answer-level facts whose signature (their rows' inputs,
    # not which run built them) it holds
    hindsight(db, "build", "--select", "agg_hb_audit_rows", env={"HINDSIGHT_PUBLISH": "off"})
    hindsight(db, "answer", "--model", "sim:noise@0.35", "--variant", "standard")
    hindsight(db, "build")
    third = snapshot_files(db)
    assert not {mart for mart in third if third[mart] == again[mart]}
    assert {model: third["fct_answers"][model] for model in again["fct_answers"]} == again["fct_answers"]
    assert_snapshot_equals_warehouse(db)


def test_snapshots_are_immutable_current_switches_and_old_ones_go(tmp_path, monkeypatch):
    """The publishing steps alone: staging -> snapshot -> current, the serving views, retention, and a
    staging folder of a killed build swept away."""
    monkeypatch.setenv(snapshots.KEEP_ENV, "2")
    monkeypatch.delenv("HINDSIGHT_SERVE", raising=False)
    warehouse = new_warehouse(tmp_path)
    columns = [["dim_build", "dbt_invocation_id", "VARCHAR"], ["dim_build", "built_at", "TIMESTAMP"],
               ["fct_x", "payload", "JSON"], ["fct_x", "n", "INTEGER"]]
    reader = None
    for number in range(1, 5):
        snapshot_id = f"build-{number}"
        staging = Path(snapshots.begin(warehouse, snapshot_id))
        with duckdb.connect() as con:
            con.execute(f"copy (select '{snapshot_id}' as dbt_invocation_id, timestamp '2026-12-04' as built_at) "
                        f"to '{staging / snapshots.mart_file('dim_build', snapshot_id)}'")
            con.execute(f"copy (select '{{\"k\": {number}}}'::json as payload, range::integer as n from range({number})) "
                        f"to '{staging / snapshots.mart_file('fct_x', snapshot_id)}'")
        abandoned = Path(snapshots.begin(warehouse, f"killed-{number}"))        # a build killed while it wrote
        snapshots.commit(warehouse, staging, snapshot_id, columns)
        assert not abandoned.exists() and snapshots.begin(warehouse, snapshot_id) == ""     # published once
        if reader is None:          # opened once, kept across publishes
            reader, inode = snapshots.open_serving(warehouse), serve_path(warehouse).stat().st_ino
        assert reader.execute("select dbt_invocation_id from dim_build").fetchall() == [(snapshot_id,)]
        assert reader.execute("select count(*), max(payload->>'k') from fct_x").fetchall() == [(number, str(number))]
        assert reader.execute("describe fct_x").fetchall()[0][1] == "JSON"
        assert snapshots.current(warehouse).manifest["marts"]["fct_x"]["rows"] == number
        # what the commands read (open_marts): the snapshot current when they connected, whatever is
        # published since, while it is kept (HINDSIGHT_SNAPSHOT_KEEP: 2 here)
        if number == 2:
            pinned = snapshots.open_marts(warehouse)
        if number in (2, 3):
            assert pinned.execute("select d.dbt_invocation_id, count(*) from dim_build d, fct_x group by 1").fetchall() == [("build-2", 2)]
    pinned.close()
    assert [s.id for s in snapshots.snapshots(warehouse)] == ["build-3", "build-4"]
    assert snapshots.current(warehouse).id == "build-4"
    # the serving file was written once: its views never changed
    assert serve_path(warehouse).stat().st_ino == inode
    assert reader.execute("select count(*) from hindsight_serving.views").fetchone()[0] == 1
    reader.close()


def test_a_partitioned_mart_writes_only_the_partitions_whose_signature_changed(tmp_path, monkeypatch):
    """A mart published a file per model (publish_partition_by): a partition whose signature the
    current snapshot holds is linked, the others written; readers, live and pinned, see the whole mart."""
    monkeypatch.delenv("HINDSIGHT_SERVE", raising=False)
    warehouse = new_warehouse(tmp_path)
    columns = [["dim_build", "dbt_invocation_id", "VARCHAR"], ["fct_y", "model", "VARCHAR"], ["fct_y", "n", "INTEGER"]]

    def publish(number: int, rows: dict, signatures: list | None, cols: list = columns) -> list | None:
        """Stage what macros/publish_snapshot.sql does: ROWS {model: count} is the mart now."""
        snapshot_id = f"build-{number}"
        staging = Path(snapshots.begin(warehouse, snapshot_id))
        to_write = snapshots.reuse_partitions(warehouse, staging, snapshot_id, "fct_y", [c for c in cols if c[0] == "fct_y"],
                                              "model", signatures)
        with duckdb.connect() as con:
            con.execute(f"copy (select '{snapshot_id}' as dbt_invocation_id) to '{staging / snapshots.mart_file('dim_build', snapshot_id)}'")
            con.execute(f"create table y (model varchar, n {cols[-1][2]})")
            for model, count in rows.items():
                con.execute("insert into y select ?, range from range(?)", [model, count])
            con.execute(f"copy (select * from y limit 0) to '{staging / snapshots.mart_file('fct_y', snapshot_id)}'")
            values = [value for (value,) in con.execute("select distinct model from y").fetchall()] if to_write is None else to_write
            for number, value in enumerate(values):     # a file per value
                con.execute(f"copy (select * from y where model is not distinct from ?) to "
                            f"'{staging / (snapshots.PARTS + 'fct_y') / f'{number}.parquet'}'", [value])
        snapshots.commit(warehouse, staging, snapshot_id, cols)
        return to_write

    def inodes() -> dict:
        now = snapshots.current(warehouse)
        return {part["value"]: [(now.path / snapshots.mart_file("fct_y", now.id, name)).stat().st_ino for name in part["files"]]
                for part in now.manifest["marts"]["fct_y"]["partitions"]}

    def seen(con) -> list:
        return con.execute("select model, count(*), sum(n) from fct_y group by model order by model nulls first").fetchall()

    odd = "org/model:7b"           # a model name no file name could hold
    assert publish(1, {odd: 3, "x y": 2, None: 1}, [[odd, "s1"], ["x y", "s1"], [None, "s1"]]) == [odd, "x y", None]   # none to link yet
    first = inodes()
    reader = snapshots.open_serving(warehouse)
    assert seen(reader) == [(None, 1, 0), (odd, 3, 3), ("x y", 2, 1)]
    # x y changed, c is new: those are written, the others linked (the same bytes)
    assert publish(2, {odd: 3, "x y": 4, "c": 1, None: 1},
                   [[odd, "s1"], ["x y", "s2"], ["c", "s1"], [None, "s1"]]) == ["x y", "c"]
    second = inodes()
    assert second[odd] == first[odd] and second[None] == first[None] and second["x y"] != first["x y"]
    assert {part["value"] for part in snapshots.current(warehouse).manifest["marts"]["fct_y"]["partitions"]
            if part["written"]} == {"x y", "c"}
    assert seen(reader) == [(None, 1, 0), ("c", 1, 0), (odd, 3, 3), ("x y", 4, 6)]
    pinned = snapshots.open_marts(warehouse)
    # a run that left the mart unchanged links every partition; a value gone from the mart is gone
    assert publish(3, {}, None) == [] and inodes() == second
    assert publish(4, {odd: 3, "c": 1, None: 1}, [[odd, "s1"], ["c", "s1"], [None, "s1"]]) == []
    assert seen(reader) == [(None, 1, 0), ("c", 1, 0), (odd, 3, 3)]
    assert seen(pinned) == [(None, 1, 0), ("c", 1, 0), (odd, 3, 3), ("x y", 4, 6)]      # build-2's, while kept
    assert snapshots.current(warehouse).manifest["marts"]["fct_y"]["rows"] == 5
    # new columns: every partition written again
    wider = columns[:2] + [["fct_y", "n", "BIGINT"]]
    assert publish(5, {odd: 1}, [[odd, "s1"]], wider) == [odd]
    assert seen(reader) == [(odd, 1, 0)]
    with snapshots.open_serving(warehouse) as fresh:         # the new columns: a new serving file, for new connections
        assert fresh.execute("describe fct_y").fetchall()[1][1] == "BIGINT"
    # no signature at all (no parent with the column): every value the mart has is found and written
    assert publish(6, {odd: 1, "late": 2}, [], wider) is None and seen(reader) == [("late", 2, 1), (odd, 1, 0)]
    pinned.close()
    reader.close()
    # retired slots take their partition files with them; the newest two slots' stay
    monkeypatch.setattr(snapshots, "GRACE_SECONDS", 0)
    publish(7, {odd: 1, "c": 2}, [[odd, "s1"], ["c", "s1"]], wider)
    slots = snapshots.live_slots(warehouse, "fct_y")
    assert len(slots) == snapshots.KEPT_SLOTS
    assert sum(len([name for name in names if "-p" in name]) for names in slots.values()) == 2 + 2


def test_readers_hammering_through_many_publishes_never_fail_nor_see_a_mix(tmp_path, monkeypatch):
    """Queries in a tight loop (a connection per query, and one connection holding a transaction)
    while snapshots are published back to back and the old ones pruned: every query returns one
    snapshot's rows whole. A view over a fixed path through a switched link failed here within
    seconds (DuckDB opens a query's files more than once, so it listed a name that was gone, or read
    one file's metadata and the next one's bytes)."""
    monkeypatch.setenv(snapshots.KEEP_ENV, "2")
    monkeypatch.delenv("HINDSIGHT_SERVE", raising=False)
    warehouse = new_warehouse(tmp_path)
    columns = [["dim_build", "dbt_invocation_id", "VARCHAR"], ["fct_x", "n", "BIGINT"], ["fct_x", "pad", "VARCHAR"]]
    sizes = [20_000 + 30_000 * (number % 5) for number in range(41)]

    def publish(number: int) -> None:
        snapshot_id = f"build-{number:02d}"
        staging = Path(snapshots.begin(warehouse, snapshot_id))
        with duckdb.connect() as con:
            con.execute(f"copy (select '{snapshot_id}' as dbt_invocation_id) to '{staging / snapshots.mart_file('dim_build', snapshot_id)}'")
            con.execute(f"copy (select range as n, repeat('x', (range % 40)::int) as pad from range({sizes[number]})) "
                        f"to '{staging / snapshots.mart_file('fct_x', snapshot_id)}' (row_group_size 5000)")
        snapshots.commit(warehouse, staging, snapshot_id, columns)

    publish(0)
    serve, done, outcomes = str(serve_path(warehouse)), threading.Event(), []

    def read(held: bool) -> None:
        con = duckdb.connect(serve, read_only=True) if held else None
        if held:
            con.execute("begin")
        while not done.is_set():
            try:
                reader = con or duckdb.connect(serve, read_only=True)
                outcomes.append(reader.execute("select count(*), sum(n) from fct_x").fetchone())
                if not held:
                    reader.close()
            except duckdb.Error as error:
                outcomes.append(str(error))
                if held:
                    con.execute("rollback; begin")

    readers = [threading.Thread(target=read, args=(held,)) for held in (False, False, True)]
    for reader in readers:
        reader.start()
    try:
        for number in range(1, len(sizes) - 1):
            publish(number)
    finally:
        done.set()
        for reader in readers:
            reader.join()
    whole = {(size, size * (size - 1) // 2) for size in sizes}
    assert len(outcomes) > 100 and [o for o in outcomes if o not in whole] == []
    # every slot of those publishes is still in live/ (none has been retired GRACE_SECONDS); once that
    # has passed, a publish leaves each mart's schema file and the two newest slots; old snapshots went
    assert len(snapshots.live_slots(warehouse, "fct_x")) == len(sizes) - 1
    # forty slots of up to 140,000 rows in live/: a query opens the current one's file only
    assert_reads_the_current_slot_only(warehouse, "fct_x", "select sum(n) from fct_x", tmp_path / "profile.json")
    monkeypatch.setattr(snapshots, "GRACE_SECONDS", 0)
    publish(len(sizes) - 1)
    slots = sorted(snapshots.live_slots(warehouse, "fct_x"))
    assert len(slots) == snapshots.KEPT_SLOTS and slots[-1] == snapshots._pointer(snapshots.snapshots_root(warehouse))[1]
    live = snapshots.snapshots_root(warehouse) / snapshots.LIVE
    assert sorted(str(f.relative_to(live)) for f in live.rglob("*") if f.is_file()) == sorted(
        str(snapshots.slot_folder(live, mart, k).relative_to(live) / f"{mart}-slot{k}.parquet")
        for mart in ("dim_build", "fct_x") for k in slots)
    assert [s.id for s in snapshots.snapshots(warehouse)] == ["build-39", "build-40"]


def test_no_snapshot_yet_says_how_to_get_one_and_live_reads_the_warehouse(tmp_path):
    db = new_warehouse(tmp_path)
    with connect(db):           # a warehouse, never built
        pass
    done = hindsight(db, "query", "select 1", expect=2)
    assert "no published snapshot of the marts yet" in done.stderr and "hindsight build" in done.stderr
    assert "Traceback" not in done.output
    assert "1" in hindsight(db, "query", "select 1 as one", "--live").stdout


DIM_BUILD = ["run", "--select", "dim_build", "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT)]


def test_plain_dbt_names_the_writer_it_waited_for(held):
    db, holder = held
    started = time.monotonic()
    done = subprocess.run([dbt_executable(), *DIM_BUILD], cwd=PROJECT, capture_output=True, text=True,
                          env=cli_env(db, {"HINDSIGHT_LOCK_WAIT": "1"}))
    output = done.stdout + done.stderr
    assert done.returncode != 0 and time.monotonic() - started < 60
    assert BUSY in output and f"PID {holder.pid}" in output and "HINDSIGHT_LOCK_WAIT" in output, output[-2000:]


def test_plain_dbt_waits_for_another_writer_then_runs(held):
    db, holder = held
    releaser = subprocess.Popen(["sh", "-c", f"sleep 3; kill {holder.pid}"])
    started = time.monotonic()
    done = subprocess.run([dbt_executable(), *DIM_BUILD], cwd=PROJECT, capture_output=True, text=True,
                          env=cli_env(db, {"HINDSIGHT_LOCK_WAIT": "60"}))
    releaser.wait()
    assert done.returncode == 0, done.stdout[-2000:]
    assert time.monotonic() - started >= 3


def test_hindsight_build_reports_a_held_warehouse_as_such_not_as_bad_arguments(held):
    db, holder = held
    done = hindsight(db, "build", expect=None, env={"HINDSIGHT_LOCK_WAIT": "0.5"})
    assert done.returncode != 0 and BUSY in done.stderr and f"PID {holder.pid}" in done.stderr
    assert "check the arguments" not in done.output


def test_the_flat_live_folder_of_earlier_releases_goes_when_its_slots_retire(tmp_path, monkeypatch):
    """A warehouse published before 12-06 has its slots as flat files in live/ (`<mart>-slot<k>.parquet`
    and `<mart>-0-schema.parquet`); the publishes after an upgrade add folder slots, and the flat files
    go once their slots retire, as any slot does."""
    monkeypatch.delenv("HINDSIGHT_SERVE", raising=False)
    monkeypatch.setattr(snapshots, "GRACE_SECONDS", 0)
    warehouse = new_warehouse(tmp_path)
    columns = [["dim_build", "dbt_invocation_id", "VARCHAR"]]
    live = snapshots.snapshots_root(warehouse) / snapshots.LIVE
    live.mkdir(parents=True)
    flat = [live / "dim_build-0-schema.parquet", live / "dim_build-slot1700000000000000.parquet"]
    with duckdb.connect() as con:
        for file in flat:
            con.execute(f"copy (select 'old' as dbt_invocation_id) to '{file}'")

    def publish(number: int) -> None:
        snapshot_id = f"build-{number}"
        staging = Path(snapshots.begin(warehouse, snapshot_id))
        with duckdb.connect() as con:
            con.execute(f"copy (select '{snapshot_id}' as dbt_invocation_id) to '{staging / snapshots.mart_file('dim_build', snapshot_id)}'")
        snapshots.commit(warehouse, staging, snapshot_id, columns)

    publish(1)          # the flat slot is one of the two newest still
    assert all(file.exists() for file in flat)
    publish(2)
    assert not any(file.exists() for file in flat) and len(snapshots.live_slots(warehouse, "dim_build")) == 2
    with snapshots.open_serving(warehouse) as reader:
        assert reader.execute("select dbt_invocation_id from dim_build").fetchall() == [("build-2",)]
