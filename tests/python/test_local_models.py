"""Local models as first-class (issue 41): a real llama.cpp server (llama-cpp-python serving
SmolLM2-135M-Instruct) with a normal and a small context, vLLM and Ollama by name against loopback
fakes that answer as they do, context budgets that never bias the paired metrics, settings that
never mix under one label, pilots of complete pairs, and the parser's rule on real replies."""
from __future__ import annotations

import json
import re

import pytest
from local_llm import LlamaServer, require_local_llm

from conftest import FAST_BUILD, PROJECT, assert_dbt_passed, hindsight, query, scalar, warehouse_copy
from fake_llm_server import FakeLLMServer, LocalServerFake
from ingest.llm.providers import Settings, make_provider
from ingest.llm.runner import RESPONSE_PARSER_VERSION, parse_answer

PAIRED = ["--conditions", "2.1,2.2", "--variant", "standard"]


@pytest.fixture
def db(requests_warehouse, tmp_path, monkeypatch):
    return warehouse_copy(requests_warehouse, tmp_path, monkeypatch, {"OPENAI_API_KEY": None})


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """Two real servers of the same model: a 2,048-token context (llama.cpp's default) and 512."""
    gguf = require_local_llm()
    folder = tmp_path_factory.mktemp("llama")
    servers = {n_ctx: LlamaServer(gguf, n_ctx, folder / f"server-{n_ctx}.log") for n_ctx in (2048, 512)}
    yield servers
    for server in servers.values():
        server.stop()


def requests_asked(db, conditions: tuple[str, ...], questions: int) -> dict[tuple[str, str], int]:
    """The pilot's requests per condition x visibility: the first QUESTIONS questions, every request of each."""
    marks = ", ".join("?" * len(conditions))
    rows = query(db, f"""
        with chosen as (
            select question_id from fct_answer_requests
            where condition in ({marks}) and prompt_variant = 'standard' and narrative_model is null
            group by question_id order by min(case_id), question_id limit {questions})
        select condition, visibility, count(*) from fct_answer_requests
        where condition in ({marks}) and prompt_variant = 'standard' and narrative_model is null
          and question_id in (select question_id from chosen)
        group by all""", [*conditions, *conditions])
    return {(c, v): n for c, v, n in rows}


def completion_counts(db, label: str) -> dict[tuple[str, str], tuple[int, int, int]]:
    rows = query(db, """select condition, visibility, sum(n_answers), sum(n_context_overflow), sum(n_prompt_truncated)
                        from agg_answer_completion where model = ? group by all""", [label])
    return {(c, v): (a, o, t) for c, v, a, o, t in rows}


@pytest.mark.slow
def test_a_pilot_on_llama_cpp_gives_complete_pairs_answers_once_judges_and_builds(db, llama):
    server = llama[2048]
    out = hindsight(db, "answer", "--model", "llamacpp:smollm2", "--base-url", server.url, "--questions", "2", *PAIRED,
                    "--max-tokens", "32", "--response-format", "json_object").stdout
    label = "llamacpp:smollm2"          # the model's first setup: the model itself
    asked = requests_asked(db, ("2.1", "2.2"), 2)
    assert sum(asked.values()) == 8 and set(asked.values()) == {2}        # both visibilities of every question
    assert out.startswith(f"{label}: 8 calls selected, 8 answered now, 0 already stored, 0 failed")
    calls = query(db, "select settings_sent, status, input_tokens, reported_model from raw.llm_calls where model = ?", [label])
    sent = [json.loads(row[0]) for row in calls]
    # llama.cpp takes max_tokens (never max_completion_tokens) and JSON mode; every call one request
    assert all(s == {"max_tokens": 32, "response_format": {"type": "json_object"}} for s in sent), sent
    assert {row[1] for row in calls} == {"ok"} and all(row[2] > 200 for row in calls) and {row[3] for row in calls} == {"smollm2"}
    # nothing is asked twice
    again = hindsight(db, "answer", "--model", "llamacpp:smollm2", "--base-url", server.url, "--questions", "2", *PAIRED,
                      "--max-tokens", "32", "--response-format", "json_object").stdout
    assert "0 answered now, 8 already stored" in again
    assert scalar(db, "select count(*) from raw.llm_calls where model = ?", [label]) == 8

    hindsight(db, "build", *FAST_BUILD)
    assert {k: v[0] for k, v in completion_counts(db, label).items()} == asked
    paired = query(db, "select count(*) from fct_answer_pairs where model = ?", [label])[0][0]
    assert paired == 4                                        # 2 questions x 2 paired conditions
    # the judge, limited to this model's answers and to N judgments in all
    judgeable = scalar(db, "select count(*) from fct_judgment_requests where model = ?", [label])
    judged = hindsight(db, "judge", "--model", "llamacpp:smollm2", "--base-url", server.url, "--answers-of", label,
                       "--limit", "2", "--max-tokens", "48").stdout
    assert f"{min(2, judgeable)} calls selected" in judged and "next: `hindsight build`" in judged
    assert scalar(db, """select count(*) from raw.llm_calls where purpose = 'judge' and target_id not in (
                             select target_id from fct_judgment_requests where model = ?)""", [label]) == 0
    hindsight(db, "build")
    assert_dbt_passed(db)


@pytest.mark.slow
def test_a_512_token_context_counts_every_overflow_never_resends_it_and_warns_of_unequal_losses(db, llama):
    small = llama[512]
    first = hindsight(db, "answer", "--model", "llamacpp:smollm2", "--base-url", small.url, "--questions", "3", *PAIRED,
                      "--max-tokens", "16", "--label", "smol-512").stdout
    asked = requests_asked(db, ("2.1", "2.2"), 3)
    calls = query(db, "select status, count(*), count(distinct call_id) from raw.llm_calls where model = 'smol-512' group by all")
    by_status = {status: n for status, n, _ in calls}
    # every request is either an answer or a counted overflow, once
    assert sum(by_status.values()) == sum(asked.values()) == 12 and set(by_status) <= {"ok", "context_overflow"}
    assert by_status.get("context_overflow", 0) > 0, first
    assert f"{by_status['context_overflow']} beyond the context window" in first
    # a rerun sends none of them again
    again = hindsight(db, "answer", "--model", "llamacpp:smollm2", "--base-url", small.url, "--questions", "3", *PAIRED,
                      "--max-tokens", "16", "--label", "smol-512").stdout
    assert "0 answered now, 12 already stored" in again
    assert scalar(db, "select count(*) from raw.llm_calls where model = 'smol-512'") == 12

    hindsight(db, "build")
    assert_dbt_passed(db)
    counts = completion_counts(db, "smol-512")
    assert {key: sum(value) for key, value in counts.items()} == asked        # the mart adds up to the requests
    assert sum(o for _, o, _ in counts.values()) == by_status["context_overflow"]
    losses = query(db, """select condition, n_full_lost, n_full_asked, n_masked_lost, n_masked_asked, n_pairs_lost, loss_warning
                          from agg_pair_losses where model = 'smol-512' order by condition""")
    assert losses and all(asked_full == 3 and asked_masked == 3 for _, _, asked_full, _, asked_masked, _, _ in losses)
    for condition, full_lost, _, masked_lost, _, pairs_lost, warning in losses:
        assert pairs_lost >= max(full_lost, masked_lost)
        assert (warning is not None) == (full_lost != masked_lost), (condition, full_lost, masked_lost, warning)
    # the longer full contexts overflow at least as often as the masked ones
    assert sum(row[1] for row in losses) >= sum(row[3] for row in losses)
    assert "requests beyond the context window" in hindsight(db, "status").stdout

    # the server restarted with a larger context: the overflowed requests are asked again only on request
    llama[512] = small = small.restarted(2048)
    assert "0 answered now, 12 already stored" in hindsight(
        db, "answer", "--model", "llamacpp:smollm2", "--base-url", small.url, "--questions", "3", *PAIRED,
        "--max-tokens", "16", "--label", "smol-512").stdout
    retried = hindsight(db, "answer", "--model", "llamacpp:smollm2", "--base-url", small.url, "--questions", "3", *PAIRED,
                        "--max-tokens", "16", "--label", "smol-512", "--retry-overflow").stdout
    assert f"{by_status['context_overflow']} answered now, {12 - by_status['context_overflow']} already stored" in retried
    hindsight(db, "build", *FAST_BUILD)
    assert sum(o for _, o, _ in completion_counts(db, "smol-512").values()) == 0
    assert scalar(db, "select count(*) from agg_pair_losses where model = 'smol-512'") == 0


@pytest.mark.slow
def test_an_audit_smoke_tier_on_llama_cpp_caps_the_protocol_budget_to_the_context_and_builds(db, llama):
    done = hindsight(db, "audit", "run", "--model", "llamacpp:smollm2", "--base-url", llama[2048].url, "--tier", "smoke",
                     "--max-tokens", "24").stdout
    assert done.startswith("registered 'smollm2'") and "8 calls selected" in done
    calls = query(db, "select status, settings_sent from raw.llm_calls where model = 'llamacpp:smollm2' and purpose like 'hb_%'")
    assert len(calls) == 8 and {status for status, _ in calls} <= {"ok", "context_overflow"}
    assert all(json.loads(sent)["max_tokens"] <= 24 for status, sent in calls if status == "ok")
    hindsight(db, "build")
    assert_dbt_passed(db)
    assert scalar(db, "select count(*) from raw.hb_responses where model_key = 'smollm2'") == sum(s == "ok" for s, _ in calls)


@pytest.mark.slow
def test_the_responses_api_against_a_server_without_it_stops_with_one_line(db, llama):
    done = hindsight(db, "answer", "--model", "openai:smollm2", "--base-url", llama[2048].url, "--api", "responses",
                     "--questions", "2", "--conditions", "0", "--variant", "standard", expect=1)
    assert done.stderr.count("has no /v1/responses (HTTP 404)") == 1 and "Fix: pass --api chat" in done.stderr
    assert "Traceback" not in done.stderr
    assert scalar(db, "select count(*) from raw.llm_calls where model = 'openai:smollm2'") == 1


@pytest.mark.slow
def test_the_documented_local_model_commands_run_as_written(db, llama, monkeypatch):
    """The README's and docs/asking-models.md's local-model blocks, their `hindsight` lines run as
    written (the server they start is the test's, at its address)."""
    monkeypatch.setenv("HINDSIGHT_LLAMACPP_BASE_URL", llama[2048].url)
    for page in ("README.md", "docs/asking-models.md"):
        block = re.search(r"<!-- local-models: run by tests/python/test_local_models.py -->\s*```sh\n(.*?)```",
                          (PROJECT / page).read_text(), re.S)
        assert block, f"{page}: the local-model block is gone"
        commands = [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.startswith("hindsight ")]
        assert len(commands) >= 3, page
        for command in commands:
            hindsight(db, *[arg.strip("'") for arg in re.findall(r"'[^']*'|\S+", command)][1:])
    assert scalar(db, "select count(*) from raw.responses where model = 'llamacpp:smollm2'") == 4


@pytest.mark.slow
def test_settings_never_mix_under_one_label(db):
    with FakeLLMServer() as server:
        base = ["--model", "openai:m", "--base-url", server.url + "/v1", "--questions", "1", *PAIRED]
        hindsight(db, "answer", *base, "--label", "m-setup")
        sent = len(server.requests)
        refused = hindsight(db, "answer", *base, "--label", "m-setup", "--response-format", "json_object",
                            "--max-tokens", "256", expect=2)
        assert len(server.requests) == sent                        # stopped before anything was sent
        assert "were made with max_tokens=1024" in refused.stderr and "response_format=json_object" in refused.stderr
        assert "--label" in refused.stderr and "Traceback" not in refused.stderr
        # without --label, the model is the label of its first setup, and another setup gets its flags
        assert "0 answered now, 4 already stored" in hindsight(db, "answer", *base).stdout     # m-setup's calls, reused
        other = hindsight(db, "answer", *base, "--response-format", "json_object", "--max-tokens", "256").stdout
        assert "stored as 'openai:m[max_tokens=256,response_format=json_object]'" in other
    labels = {row[0]: row[1] for row in query(db, "select model, count(*) from raw.responses where model like '%m%' "
                                                  "and load_id in (select load_id from raw.loads where kind = 'answer') group by all")}
    assert labels == {"m-setup": 4, "openai:m": 4, "openai:m[max_tokens=256,response_format=json_object]": 4}


def test_local_servers_by_name_have_their_usual_addresses_and_capabilities(monkeypatch):
    for spec, url in [("vllm:qwen3.6-27b", "http://localhost:8000/v1"), ("ollama:qwen3:0.6b", "http://localhost:11434/v1"),
                      ("llamacpp:smollm2", "http://localhost:8080/v1")]:
        monkeypatch.delenv(f"HINDSIGHT_{spec.split(':')[0].upper()}_BASE_URL", raising=False)
        provider = make_provider(spec, None, Settings(max_tokens=99, response_format="json_object"))
        assert provider.base_url == url and provider.provider == spec.split(":")[0]
        assert provider.arguments(Settings(max_tokens=99, response_format="json_object"))[0] == {
            "max_tokens": 99, "response_format": {"type": "json_object"}}
    # a local model whose name matches an OpenAI reasoning row is still sent max_tokens
    assert "max_tokens" in make_provider("vllm:o3-mini-distill", None, Settings()).arguments(Settings())[0]
    monkeypatch.setenv("HINDSIGHT_VLLM_BASE_URL", "http://gpu-box:8000/v1")
    assert make_provider("vllm:qwen3.6-27b", None, Settings()).base_url == "http://gpu-box:8000/v1"


@pytest.mark.slow
def test_vllm_says_its_context_and_counts_the_prompt_so_nothing_too_long_is_sent(db):
    vllm = LocalServerFake("vllm", context=600)
    with FakeLLMServer(local=vllm) as server:
        out = hindsight(db, "answer", "--model", "vllm:qwen3.6-27b", "--base-url", server.url + "/v1", "--questions", "3",
                        *PAIRED, "--max-tokens", "400", "--label", "qwen-vllm").stdout
    rows = query(db, "select status, settings_sent from raw.llm_calls where model = 'qwen-vllm'")
    overflowed = [r for r in rows if r[0] == "context_overflow"]
    assert overflowed and len(rows) == 12 and f"{len(overflowed)} beyond the context window" in out
    # the window came from /v1/models and the count from /tokenize: no overflowing request reached the model
    assert vllm.sent == len(rows) - len(overflowed)
    budgets = [json.loads(r[1])["max_tokens"] for r in rows if r[0] == "ok"]
    assert budgets and max(budgets) <= 400 and min(budgets) < 400       # capped to what fits


@pytest.mark.slow
def test_ollama_cutting_a_prompt_silently_is_stored_as_prompt_truncated_never_as_an_answer(db):
    # /api/show names no num_ctx (2,048 assumed, Ollama's default); the server really runs with 400
    ollama = LocalServerFake("ollama", context=400)
    with FakeLLMServer(local=ollama) as server:
        out = hindsight(db, "answer", "--model", "ollama:qwen3:0.6b", "--base-url", server.url + "/v1", "--questions", "3",
                        *PAIRED, "--max-tokens", "64", "--label", "qwen-ollama").stdout
    statuses = dict(query(db, "select coalesce(parse_status, status), count(*) from raw.llm_calls "
                              "where model = 'qwen-ollama' group by all"))
    assert statuses.get("prompt_truncated", 0) > 0 and f"{statuses['prompt_truncated']} answered to a shortened prompt" in out
    answers = scalar(db, "select count(*) from raw.responses where model = 'qwen-ollama'")
    assert answers == sum(statuses.values()) - statuses["prompt_truncated"] - statuses.get("context_overflow", 0)
    hindsight(db, "build", *FAST_BUILD)
    counts = completion_counts(db, "qwen-ollama")
    assert sum(t for _, _, t in counts.values()) == statuses["prompt_truncated"]


@pytest.mark.slow
def test_an_unknown_provider_writes_no_registry_row(db):
    before = scalar(db, "select count(*) from raw.hb_registry")
    done = hindsight(db, "audit", "run", "--model", "vlm:qwen", "--tier", "smoke", expect=2)
    assert "unknown provider 'vlm'" in done.stderr and "vllm" in done.stderr
    assert scalar(db, "select count(*) from raw.hb_registry") == before


# replies SmolLM2-135M-Instruct gave to the Appendix C answer prompt on the llama.cpp server
REAL_REPLIES = {
    "True": (None, "not_json"),
    'The JSON structure is:\n```python\n{"event": "dose increase", "time": -2160}\n{\n  "evidence" : ["x"]]\n```': (None, "missing_answer"),
    '{"answer": "A. <10%", "evidence": ["lipase 1,200 U/L"]}': ("A. <10%", "ok"),
    'Here is an example of this answer: {"answer": "A.", "evidence": []}. My answer: {"answer": "C. 31-60%", "evidence": ["CT"]}':
        ("C. 31-60%", "ok"),
    '{"answer": "false", "evidence": ["no sepsis"]} Note: {"confidence": "low"}': ("false", "ok"),
}


@pytest.mark.parametrize("reply", REAL_REPLIES)
def test_the_answer_is_the_last_json_object_that_carries_the_answer_field(reply):
    value, status = parse_answer(reply)
    assert ((value or {}).get("answer"), status) == REAL_REPLIES[reply]
    assert RESPONSE_PARSER_VERSION == "answer-json-2"


@pytest.mark.slow
@pytest.mark.parametrize("kind, start", [("llamacpp", "llama-server -m MODEL.gguf --alias m --port"), ("vllm", "vllm serve m --port")])
def test_a_server_that_refuses_the_connection_stops_the_run_before_any_call(db, kind, start):
    import socket

    with socket.socket() as probe:           # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    before = scalar(db, "select count(*) from raw.llm_calls")
    done = hindsight(db, "answer", "--model", f"{kind}:m", "--base-url", f"http://127.0.0.1:{port}/v1", "--questions", "1", expect=2)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"nothing answers at http://127.0.0.1:{port}" in lines[0], done.stderr
    assert f"{start} {port}" in lines[0] and "--base-url" in lines[0] and "Traceback" not in done.stderr
    assert "APIConnectionError" not in done.stdout + done.stderr
    assert scalar(db, "select count(*) from raw.llm_calls") == before          # no call was made, none recorded
