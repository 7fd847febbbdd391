"""Collect in parallel (ingest/collect): runs never hold the warehouse. Several `hindsight answer`
processes at once against a loopback OpenAI-compatible server (its own process, answering each call
after a delay), overlapping selections among them, send every call once between them, while
`hindsight build`, `hindsight status` and `hindsight load` succeed meanwhile; a run killed with
SIGKILL is resumed and its claims taken over; claims of a run that stopped beating expire; two
warehouses' calls merge with `hindsight load calls`; a warehouse made by 1.0.0 keeps its calls; a
build killed half-way and a full disk lose and duplicate nothing."""
from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from conftest import PROJECT, cli_env, hindsight, query, write_jsonl
from ingest.collect import store

SERVER = PROJECT / "tests" / "python" / "fake_llm_server.py"


@pytest.fixture(scope="module")
def demo(demo_warehouse):
    return demo_warehouse[0]


def copy_of(demo: Path, folder: Path) -> Path:
    """The built demo in FOLDER, without a runs' store (a warehouse as 1.0.0 left it)."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in demo.parent.iterdir():
        if path.name.startswith(demo.stem) and not path.name.endswith((".calls.sqlite", ".lock")):
            (shutil.copytree if path.is_dir() else shutil.copy2)(path, folder / path.name)
    return folder / demo.name


class Server:
    """fake_llm_server's asyncio server in a process of its own; `count()` is the requests it served."""

    def __init__(self, delay: float):
        self.process = subprocess.Popen([sys.executable, str(SERVER), "--delay", str(delay)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.process.stdout.readline().strip()}/v1"

    def count(self) -> int:
        self.process.stdin.write("count\n")
        self.process.stdin.flush()
        return int(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=10)


@pytest.fixture
def server():
    running = Server(0.05)
    yield running
    running.close()


def start(db: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ingest.cli", *args], env=cli_env(db, {"OPENAI_API_KEY": "test", **(env or {})}),
                            cwd=PROJECT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def answer(db: Path, url: str, model: str, *extra: str, env: dict | None = None) -> subprocess.Popen:
    return start(db, "answer", "--model", model, "--base-url", url, "--concurrency", "8", *extra, env=env)


def ledger(db: Path) -> tuple[int, int]:
    """(ok rows, distinct ok calls) of the runs' store, outside the history it began with."""
    con = sqlite3.connect(store.store_path(db))
    try:
        return con.execute("select count(*), count(distinct call_id) from raw_llm_calls "
                           "where status = 'ok' and model like 'openai:%'").fetchone()
    finally:
        con.close()


def requests_of(db: Path, conditions: tuple[str, ...]) -> int:
    marks = ", ".join("?" * len(conditions))
    return query(db, f"select count(*) from fct_answer_requests where narrative_model is null and condition in ({marks})",
                 list(conditions))[0][0]


def test_runs_at_once_send_each_call_once_while_builds_status_and_loads_go_on(demo, server, tmp_path):
    db = copy_of(demo, tmp_path / "w")
    everything = ("0", "1.1", "1.2", "2.1", "2.2")
    runs = [answer(db, server.url, "openai:A", "--samples", "2"),
            answer(db, server.url, "openai:B", "--samples", "2"),
            answer(db, server.url, "openai:C", "--conditions", "0,1.1,1.2", "--samples", "2"),
            answer(db, server.url, "openai:C", "--conditions", "2.1,2.2", "--samples", "2"),
            answer(db, server.url, "openai:A", "--samples", "2")]         # A again, in another terminal
    seen_running, built, loaded = False, 0, False
    while any(run.poll() is None for run in runs):
        status = hindsight(db, "status")
        seen_running |= " running " in status.stdout and "/" in status.stdout
        if not loaded:         # a load while runs go on
            hindsight(db, "load", "responses", write_jsonl(tmp_path / "replayed.jsonl", [
                {"question_id": query(db, "select min(question_id) from dim_questions")[0][0], "model": "replay:meanwhile",
                 "condition": "2.1", "visibility": "full", "answer": "true"}]))
            loaded = True
        elif built < 2:
            assert "brought in from the runs' store" in hindsight(db, "build").stderr
            built += 1
        time.sleep(0.5)
    outputs = [run.communicate() for run in runs]
    assert all(run.returncode == 0 for run in runs), [err[-2000:] for _, err in outputs]
    assert seen_running and built >= 1 and loaded
    rows, distinct = ledger(db)
    assert rows == distinct == server.count()                   # every call sent once, stored once
    assert distinct == 2 * (2 * requests_of(db, everything) + requests_of(db, everything))
    taken = sum(int(out.split("taken by another run")[0].rsplit(",", 1)[-1]) for out, _ in outputs if "taken by another run" in out)
    assert taken > 0                                            # the two A runs shared the work
    hindsight(db, "build")
    answers = dict(query(db, "select model, count(*) from fct_answers where model like 'openai:%' group by 1"))
    assert answers == {"openai:A": 2 * requests_of(db, everything), "openai:B": 2 * requests_of(db, everything),
                       "openai:C": 2 * requests_of(db, everything)}
    assert query(db, "select count(*) from raw.llm_calls where model like 'openai:%'")[0][0] == distinct
    status = hindsight(db, "status").stdout
    assert status.count(" finished ") >= 5 and "no build has brought in yet" not in status


def test_a_killed_run_resumes_and_its_claims_are_taken_over(demo, tmp_path):
    db = copy_of(demo, tmp_path / "w")
    slow = Server(0.3)
    try:
        run = answer(db, slow.url, "openai:K", "--conditions", "2.1")
        deadline = time.monotonic() + 60
        while (not store.store_path(db).exists() or ledger(db)[0] < 20) and time.monotonic() < deadline:
            time.sleep(0.2)
        os.kill(run.pid, signal.SIGKILL)                        # at some point mid-run
        run.wait()
        stored_before, _ = ledger(db)
        status = hindsight(db, "status").stdout
        assert " crashed " in status
        again = answer(db, slow.url, "openai:K", "--conditions", "2.1")
        out, err = again.communicate(timeout=300)
        assert again.returncode == 0, err[-2000:]
        rows, distinct = ledger(db)
        assert rows == distinct == requests_of(db, ("2.1",)) > stored_before >= 20
        # at most the calls in flight when it was killed were sent twice (their replies never stored)
        assert rows <= slow.count() <= rows + 8
        assert f"{stored_before} already stored" in out
    finally:
        slow.close()


def test_a_claim_holds_while_its_run_beats_and_expires_when_it_stops(tmp_path, monkeypatch):
    monkeypatch.setenv(store.CLAIM_ENV, "1")
    path = store.ensure_store(tmp_path / "warehouse.duckdb")       # no warehouse: an empty store
    one, two = store.Run(path, "answer", "m"), store.Run(path, "answer", "m")
    try:
        assert one.claim("call-1") and not two.claim("call-1")      # held by a live, beating run
        time.sleep(1.5)
        assert not two.claim("call-1")                              # its heartbeat keeps it
        # a run on another machine that stopped beating: its claim expires after the claim time
        con = store.connect(path)
        con.execute("insert into runs (run_id, host, pid, state, started_at, heartbeat_at) values ('gone', 'elsewhere', 1, "
                    "'running', ?, ?)", [store._now(), store._now()])
        con.execute("insert into claims values ('call-2', 'gone', ?, ?)", [time.time(), time.time() + 1])
        assert not two.claim("call-2")
        time.sleep(1.2)
        assert two.claim("call-2")
        # a stored call is never claimed again
        con.execute("insert into raw_llm_calls (call_id, status) values ('call-3', 'ok')")
        assert not one.claim("call-3")
        con.close()
    finally:
        one.finish("finished")
        two.finish("finished")
    assert store.connect(path).execute("select count(*) from claims").fetchone()[0] == 0


def test_two_warehouses_merge_with_load_calls(demo, server, tmp_path):
    here, there = copy_of(demo, tmp_path / "here"), copy_of(demo, tmp_path / "there")
    # both machines answer 2.1 with the same model and server (the same calls), the other also 2.2
    for db, conditions in ((here, "2.1"), (there, "2.1,2.2")):
        done = answer(db, server.url, "openai:M", "--conditions", conditions)
        _, err = done.communicate(timeout=300)
        assert done.returncode == 0, err
    hindsight(there, "build")          # part of the other machine's calls in its warehouse, the rest in its store
    extra = answer(there, server.url, "openai:N", "--conditions", "0")
    assert extra.wait(timeout=300) == 0
    merged = hindsight(here, "load", "calls", there).stdout
    both, only_there = requests_of(here, ("2.1",)), requests_of(here, ("2.2",)) + requests_of(here, ("0",))
    assert f"added {only_there} llm_calls" in merged and f"of which {both} calls both machines answered" in merged
    assert "added nothing new" in hindsight(here, "load", "calls", there).stdout        # again: nothing
    hindsight(here, "build")
    answers = dict(query(here, "select model, count(*) from fct_answers where model like 'openai:%' group by 1"))
    assert answers == {"openai:M": both + requests_of(here, ("2.2",)), "openai:N": requests_of(here, ("0",))}
    calls = query(here, "select count(*), count(distinct call_id) from raw.llm_calls where model like 'openai:%'")[0]
    assert calls[0] == calls[1] == both + only_there
    assert hindsight(here, "load", "calls", here / "nowhere.duckdb", expect=2).stderr.count("\n") == 1


def test_a_1_0_0_warehouse_keeps_its_calls(demo, tmp_path):
    db = copy_of(demo, tmp_path / "w")
    before = query(db, "select count(*) from raw.llm_calls")[0][0]
    assert not store.store_path(db).exists()
    # the demo's own answers (made by 1.0.0's path, into the warehouse) count as stored: none asked again
    done = hindsight(db, "answer", "--model", "sim:hindsight@0.3", "--conditions", "2.1")
    assert " 0 answered now" in done.stdout and "already stored" in done.stdout
    con = sqlite3.connect(store.store_path(db))
    assert con.execute("select count(*) from raw_llm_calls").fetchone()[0] == before
    con.close()
    hindsight(db, "build")
    assert query(db, "select count(*) from raw.llm_calls")[0][0] == before          # nothing brought in twice


def test_a_build_killed_while_it_brings_calls_in_loses_and_duplicates_nothing(demo, server, tmp_path, monkeypatch):
    from ingest.collect import ingest as ingesting
    from ingest.db import connect

    db = copy_of(demo, tmp_path / "w")
    run = answer(db, server.url, "openai:F", "--conditions", "2.1")
    assert run.wait(timeout=300) == 0
    before = duckdb.connect(str(db), read_only=True).execute("select count(*) from raw.responses").fetchone()[0]
    calls = ingesting.insert_rows

    def dies(con, table, rows):
        if table == "raw.responses":
            raise KeyboardInterrupt("killed")          # the build stopped half-way
        calls(con, table, rows)

    monkeypatch.setattr(ingesting, "insert_rows", dies)
    with pytest.raises(KeyboardInterrupt), connect(db) as con:
        ingesting.ingest(con, db)
    monkeypatch.setattr(ingesting, "insert_rows", calls)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select count(*) from raw.responses").fetchone()[0] == before
        assert con.execute("select count(*) from raw.llm_calls where model = 'openai:F'").fetchone()[0] == 0
    hindsight(db, "build")
    requests = requests_of(db, ("2.1",))
    assert query(db, "select count(*), count(distinct call_id) from raw.llm_calls where model = 'openai:F'")[0] == (requests, requests)
    assert query(db, "select count(*) from raw.responses")[0][0] == before + requests


def test_a_full_disk_while_a_run_stores_stops_it_and_the_next_run_resumes(demo, server, tmp_path, monkeypatch):
    from ingest.collect import connection
    from ingest.llm.answer import answer_requests
    from ingest.llm.profiles import Overrides

    db = copy_of(demo, tmp_path / "w")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    written = [0]
    real = connection.RunConnection.stored

    def fills(self, records):
        written[0] += 1
        if written[0] > 3:
            raise sqlite3.OperationalError("database or disk is full")
        real(self, records)

    monkeypatch.setattr(connection.RunConnection, "stored", fills)
    with pytest.raises(sqlite3.OperationalError), connection.run_connection("answer", "openai:D", warehouse=db) as con:
        answer_requests(con, "openai:D", server.url, conditions=["2.1"], overrides=Overrides())
    kept, _ = ledger(db)
    assert kept > 0
    monkeypatch.setattr(connection.RunConnection, "stored", real)
    status = hindsight(db, "status").stdout
    assert " failed " in status
    with connection.run_connection("answer", "openai:D", warehouse=db) as con:
        summary = answer_requests(con, "openai:D", server.url, conditions=["2.1"], overrides=Overrides())
    assert summary.from_cache == kept and summary.answered == requests_of(db, ("2.1",)) - kept
    rows, distinct = ledger(db)
    assert rows == distinct == requests_of(db, ("2.1",))


def test_the_batch_path_never_submits_a_call_twice_from_two_processes(tmp_path, monkeypatch):
    """Two runs that chose the same pending calls: the second finds them batched by the first inside
    its transaction, and submits nothing."""
    from ingest.collect.connection import RunConnection
    from ingest.llm.batch import BatchOptions, live_calls, submit
    from ingest.llm.providers import make_provider
    from ingest.llm.runner import Job

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    db = tmp_path / "warehouse.duckdb"
    provider = make_provider("openai:gpt-4.1-mini", "http://127.0.0.1:9/v1", provider_settings())
    jobs = [Job("answer", f"r{i}", [{"role": "user", "content": f"q{i}"}], {}, settings=provider_settings(), call_id=f"c{i}")
            for i in range(5)]

    class Client:
        def send(self, con, row, payload):
            return {"batch_id": f"batch-{row['batch_key'][:6]}", "status": "validating", "provider_status": "validating"}

    first, second = RunConnection(db, marts=duckdb.connect()), RunConnection(db, marts=duckdb.connect())
    assert submit(first, Client(), provider, "openai:gpt-4.1-mini", jobs, BatchOptions()) == 5
    assert submit(second, Client(), provider, "openai:gpt-4.1-mini", jobs, BatchOptions()) == 0
    assert live_calls(second, "openai:gpt-4.1-mini") == {f"c{i}" for i in range(5)}


def provider_settings():
    from ingest.llm.providers import Settings

    return Settings(max_tokens=100)


def recipe(marker: str) -> str:
    found = re.search(rf"<!-- {marker}: run by tests/python/test_parallel_runs.py -->\s*```sh\n(.*?)```",
                      (PROJECT / "docs" / "asking-models.md").read_text(), re.S)
    assert found, f"docs/asking-models.md: the {marker} is gone"
    return found.group(1)


def providers_env(url: str) -> dict:
    """Both SDKs pointed at the loopback server, as their own variables point them anywhere; the
    project's environment first on the path, as `source .venv/bin/activate` puts it."""
    return {"OPENAI_BASE_URL": f"{url}/v1", "ANTHROPIC_BASE_URL": url, "OPENAI_API_KEY": "test", "ANTHROPIC_API_KEY": "test",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def test_the_docs_recipe_for_four_models_at_once_runs_as_written(demo, tmp_path):
    from fake_llm_server import FakeLLMServer

    db = copy_of(demo, tmp_path / "w")
    text = recipe("parallel-recipe").replace("export OPENAI_API_KEY=… ANTHROPIC_API_KEY=…\n", "")
    with FakeLLMServer(delay=0.02) as fake:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=db.parent, capture_output=True, text=True,
                              env=cli_env(db, providers_env(fake.url)), timeout=1200)
        sent = len(fake.requests)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "runs (live from the runs' store" in done.stdout and "brought in from the runs' store" in done.stderr
    per_model = requests_of(db, ("2.1", "2.2"))
    answers = dict(query(db, "select model, count(*) from fct_answers where model not like 'sim:%' group by 1"))
    assert answers == {model: per_model for model in ("openai:gpt-4.1-mini", "anthropic:claude-haiku-4-5", "openai:gpt-4.1",
                                                      "anthropic:claude-sonnet-4-5")}
    assert sent == 4 * per_model                                    # every call sent once
    assert hindsight(db, "status").stdout.count(" finished ") >= 4


def test_the_docs_recipe_for_two_machines_runs_as_written(demo, tmp_path):
    from fake_llm_server import FakeLLMServer

    b, a = copy_of(demo, tmp_path / "b"), copy_of(demo, tmp_path / "a")
    text = recipe("two-machines-recipe")
    on_b, on_a = text.split("# on machine A")
    with FakeLLMServer() as fake:
        for db, block in ((b, on_b), (a, on_a)):
            if db is a:            # what the recipe says to copy: the warehouse file and its runs' store
                (a.parent / "from-b").mkdir()
                for path in (b, store.store_path(b)):
                    shutil.copy2(path, a.parent / "from-b" / path.name)
            commands = [line.split("  #")[0].strip() for line in block.splitlines() if line.startswith("hindsight ")]
            for command in commands:
                done = subprocess.run(command.split(), cwd=db.parent, capture_output=True, text=True,
                                      env=cli_env(db, providers_env(fake.url)))
                assert done.returncode == 0, command + done.stdout[-2000:] + done.stderr[-2000:]
                if command.startswith("hindsight load calls"):
                    said = done.stdout
        assert "added nothing new" in said                      # the second load
    both, only_b = requests_of(a, ("2.1",)), requests_of(a, ("2.2",))
    assert dict(query(a, "select model, count(*) from fct_answers where model = 'openai:gpt-4.1-mini' group by 1")) == {
        "openai:gpt-4.1-mini": both + only_b}
    assert query(a, "select count(*), count(distinct call_id) from raw.llm_calls where model = 'openai:gpt-4.1-mini'")[0] == (
        both + only_b, both + only_b)
