"""Batch collection against loopback servers that implement OpenAI's Files and Batches endpoints and
Anthropic's Message Batches endpoints (object shapes, state transitions, partial errors, expiry,
cancellation), driven by the real SDK clients: exactly once across restarts and crashes."""
from __future__ import annotations

import json

import pytest

from conftest import hindsight, query, scalar, warehouse_copy
from fake_llm_server import FakeLLMServer

pytestmark = pytest.mark.slow

SECRET = "sk-test-DO-NOT-STORE-batch-0987654321"
ANSWER = ["answer", "--conditions", "2.1", "--variant", "standard"]


@pytest.fixture
def db(requests_warehouse, tmp_path, monkeypatch):
    return warehouse_copy(requests_warehouse, tmp_path, monkeypatch, {"OPENAI_API_KEY": SECRET, "ANTHROPIC_API_KEY": SECRET})


def chat_bodies(server) -> list[dict]:
    return [b for b in server.requests if "messages" in b]


def test_openai_batches_submit_collect_exactly_once_and_a_rerun_submits_nothing(db):
    with FakeLLMServer() as server:
        url = ["--base-url", server.url + "/v1"]
        args = [*ANSWER, "--model", "openai:gpt-4.1-mini", *url, "--limit", "20"]
        out = hindsight(db, *args, "--batch", "--batch-size", "8").output
        assert "20 calls submitted now, 0 already in a live batch" in out
        assert not server.requests                                   # nothing asked directly
        assert len(server.batches.openai) == 3 and sorted(len(v) for v in server.batches.inputs.values()) == [4, 8, 8]
        lines = [json.loads(line) for f in server.batches.files.values() for line in f["content"].decode().splitlines()]
        assert {line["url"] for line in lines} == {"/v1/chat/completions"} and len({line["custom_id"] for line in lines}) == 20
        assert all(line["body"]["model"] == "gpt-4.1-mini" and line["body"]["max_tokens"] == 1024 for line in lines)
        assert all(SECRET not in f["content"].decode() for f in server.batches.files.values())
        listed = hindsight(db, "batches").output
        assert listed.count("batch_0000") == 3 and "validating" in listed and "openai:gpt-4.1-mini" in listed

        again = hindsight(db, *args, "--batch").output                 # polls once: in progress, nothing new
        assert "0 calls submitted now, 20 already in a live batch" in again and len(server.batches.openai) == 3
        done = hindsight(db, "batches", "collect", "--wait", "--poll-interval", "0.01").output
        assert "20 results stored now" in done and "0 batches still open" in done
        assert len(chat_bodies(server)) == 20                         # each request answered once, inside a batch
        rerun = hindsight(db, *args, "--batch").output
        assert "0 answered now, 20 already stored" in rerun and "submitted" not in rerun
        direct = hindsight(db, *args).output
        assert "0 answered now, 20 already stored" in direct and len(chat_bodies(server)) == 20
    assert scalar(db, "select count(*) from raw.responses") == 20
    assert query(db, "select count(*), count(distinct call_id), count(batch_key) from raw.llm_calls") == [(20, 20, 20)]
    assert query(db, "select status, sum(n_stored), sum(n_duplicates) from raw.batches group by all") == [("collected", 20, 0)]
    for table in ("raw.batches", "raw.batch_calls", "raw.llm_calls", "raw.responses"):
        assert scalar(db, f"select count(*) from {table} t where t::varchar like '%{SECRET}%'") == 0
    status = hindsight(db, "status").output
    assert "openai:gpt-4.1-mini  answer   batch" in status


def test_anthropic_batch_expired_half_done_is_finished_in_a_later_batch(db):
    """A batch whose 24 h window ends half done: the finished half is stored, the expired half is
    pending again and goes into a new batch while waiting; thinking stays apart in batch results too."""
    with FakeLLMServer(batch_script=lambda provider, index, batch: {"expire": True} if index == 0 else None) as server:
        args = [*ANSWER, "--model", "anthropic:claude-sonnet-4-5", "--base-url", server.url, "--limit", "10",
                "--thinking-budget", "2048", "--max-tokens", "4096"]
        out = hindsight(db, *args, "--batch", "--wait", "--poll-interval", "0.01").output
        assert "10 answered now" in out
        assert [b["request_counts"]["expired"] for b in server.batches.anthropic.values()] == [5, 0]
        assert [len(v) for v in server.batches.inputs.values()] == [10, 5]
        assert all(r["params"]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
                   for v in server.batches.inputs.values() for r in v)
    assert query(db, "select outcome, count(*) from raw.batch_calls group by all order by 1") == \
        [("expired", 5), ("stored", 10)]
    calls = query(db, "select count(*), count(distinct call_id), min(reasoning_text) from raw.llm_calls")[0]
    assert calls[:2] == (10, 10) and calls[2].startswith("The later events point one way")
    assert scalar(db, "select count(*) from raw.responses") == 10


def test_errored_items_are_pending_again_and_cancel_stops_a_batch(db):
    def script(n, body):       # the first two items of the first batch fail
        return {"status": 400, "error": {"message": "injected item error", "type": "invalid_request_error"}} if n < 2 else None

    with FakeLLMServer(script, batch_script=lambda provider, index, batch: {"stall": True} if index == 1 else None) as server:
        args = [*ANSWER, "--model", "openai:gpt-4.1-mini", "--base-url", server.url + "/v1", "--limit", "6", "--batch"]
        out = hindsight(db, *args, "--wait", "--poll-interval", "0.01", expect=1)
        assert "4 answered now" in out.output and "2 failed" in out.output
        assert query(db, "select outcome, count(*) from raw.batch_calls group by all order by 1") == [("errored", 2), ("stored", 4)]
        # the next run resubmits the errored items (the second batch stalls), and cancelling it frees them again
        assert "2 calls submitted now" in hindsight(db, *args).output
        stalled = [b for b in server.batches.openai.values() if b["status"] != "completed"][0]["id"]
        assert "cancelling" in hindsight(db, "batches", "cancel", stalled).output
        hindsight(db, "batches", "collect", "--wait", "--poll-interval", "0.01")
        assert query(db, "select status, provider_status from raw.batches where batch_id = ?", [stalled]) == \
            [("collected", "cancelled")]
        assert "2 calls submitted now" in hindsight(db, *args).output
    assert scalar(db, "select count(*) from raw.llm_calls where status = 'ok'") == 4
    assert scalar(db, "select count(*) from raw.llm_calls where status = 'error'") == 2


@pytest.mark.parametrize("provider, point", [
    ("openai", "before_upload"), ("openai", "after_upload"), ("openai", "after_create"), ("openai", "during_collect"),
    ("anthropic", "after_create"), ("anthropic", "during_collect")])
def test_a_crash_at_any_point_loses_and_duplicates_nothing(db, provider, point):
    """Kill the process at each point between writing the batch and storing its last result, then run
    the command again: one batch at the provider, every result stored once, a rerun submits nothing."""
    model = "openai:gpt-4.1-mini" if provider == "openai" else "anthropic:claude-haiku-4-5"
    with FakeLLMServer() as server:
        base = server.url + "/v1" if provider == "openai" else server.url
        args = [*ANSWER, "--model", model, "--base-url", base, "--limit", "12", "--batch"]
        if point == "during_collect":
            hindsight(db, *args)
            env = {"HINDSIGHT_BATCH_CRASH": point, "HINDSIGHT_BATCH_COMMIT_EVERY": "5"}
            killed = hindsight(db, "batches", "collect", "--wait", "--poll-interval", "0.01", expect=-9, env=env)
            assert killed.returncode == -9
            assert scalar(db, "select count(*) from raw.llm_calls") == 5        # one transaction of five, then the kill
        else:
            hindsight(db, *args, expect=-9, env={"HINDSIGHT_BATCH_CRASH": point})
            assert scalar(db, "select count(*) from raw.batches where status = 'preparing'") == 1
        out = hindsight(db, *args, "--wait", "--poll-interval", "0.01").output
        made = server.batches.openai if provider == "openai" else server.batches.anthropic
        assert len(made) == 1                 # found again after the crash, or (before the upload) made on resume
        assert f"{7 if point == 'during_collect' else 12} answered now" in out
        rerun = hindsight(db, *args).output
        assert "submitted" not in rerun and "12 already stored" in rerun
    assert query(db, "select count(*), count(distinct call_id) from raw.llm_calls") == [(12, 12)]
    assert scalar(db, "select count(*) from raw.responses") == 12
    if point == "before_upload":
        assert query(db, "select status from raw.batches order by submitted_at") == [("abandoned",), ("collected",)]
    if point == "during_collect":
        assert query(db, "select n_stored, n_duplicates from raw.batches") == [(7, 5)]


def test_the_responses_endpoint_and_a_truncated_item_in_a_batch(db):
    """`--api responses` batches name /v1/responses; an item that ran out of tokens is stored as
    truncated, like a direct call, and is not submitted again without --retry-truncated."""
    def script(n, body):
        return {"truncate": True} if n == 0 else None

    with FakeLLMServer(script) as server:
        args = [*ANSWER, "--model", "openai:gpt-5.5", "--api", "responses", "--base-url", server.url + "/v1", "--limit", "4",
                "--batch"]
        out = hindsight(db, *args, "--wait", "--poll-interval", "0.01").output
        assert "4 answered now" in out and "1 truncated at the token limit" in out
        lines = [json.loads(line) for f in server.batches.files.values() if f["purpose"] == "batch"
                 for line in f["content"].decode().splitlines()]
        assert {line["url"] for line in lines} == {"/v1/responses"}
        assert all(line["body"]["max_output_tokens"] == 1024 and "input" in line["body"] for line in lines)
        assert "submitted" not in hindsight(db, *args).output
    assert query(db, "select parse_status, finish_reason, count(*) from raw.llm_calls group by all order by 1") == \
        [("ok", "completed", 3), ("truncated", "max_output_tokens", 1)]


@pytest.mark.parametrize("command", [
    ["answer", "--conditions", "2.1", "--variant", "standard"],
    ["generate", "narratives"],
    ["generate", "questions"],
    ["judge"],
    ["audit", "run", "--tier", "smoke"],
])
def test_batch_against_a_server_without_the_batch_api_stops_with_one_line(db, command):
    """vLLM, llama.cpp and Ollama serve completions but no Files or Batches routes: every command that
    takes --batch says so on one line before storing or sending anything, and names the fix."""
    with FakeLLMServer(batch_api=False) as server:
        url = server.url + "/v1"
        before = scalar(db, "select count(*) from raw.batches")
        done = hindsight(db, *command, "--model", "openai:qwen2.5-7b", "--base-url", url, "--limit", "3", "--batch", expect=2)
        assert "Traceback" not in done.output
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, done.output
        assert url in errors[0] and "HTTP 404" in errors[0] and "drop --batch" in errors[0]
        assert not server.requests and scalar(db, "select count(*) from raw.batches") == before
        assert scalar(db, "select count(*) from raw.llm_calls") == 0
        hindsight(db, *command, "--model", "openai:qwen2.5-7b", "--base-url", url, "--limit", "3")   # the fix works


def test_anthropic_batch_against_a_proxy_without_message_batches_stops_with_one_line(db):
    with FakeLLMServer(batch_api=False) as server:
        done = hindsight(db, *ANSWER, "--model", "anthropic:claude-haiku-4-5", "--base-url", server.url, "--limit", "2",
                         "--batch", expect=2)
        assert "Traceback" not in done.output and "Message Batches API" in done.stderr and server.url in done.stderr
