"""The runners against loopback servers speaking the OpenAI and Anthropic wire
formats, with the real SDK clients: exactly once, retries, resume, the call
ledger, and the information boundary."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from conftest import FAST_BUILD, PROJECT, assert_dbt_passed, cli_env, hindsight, query, scalar, warehouse_copy
from fake_llm_server import FakeLLMServer
from ingest.llm import capabilities

pytestmark = pytest.mark.slow

SECRET = "sk-test-DO-NOT-STORE-1234567890"
HIDDEN_NAMES = ["correct_answer", "hindsight_trap", "hindsight_trap_explanation", "eval_target", "reference_time",
                "early_cutoff"]


@pytest.fixture
def db(requests_warehouse, tmp_path, monkeypatch):
    return warehouse_copy(requests_warehouse, tmp_path, monkeypatch, {"OPENAI_API_KEY": SECRET, "ANTHROPIC_API_KEY": SECRET})


def hidden_values(db):
    """Hidden prose that can only leak through a hidden field (the cutoff event and reference time
    name TTS events, which a visible TTS shows by design)."""
    rows = query(db, "select hindsight_trap_explanation from dim_questions where hindsight_trap_explanation is not null")
    return {row[0] for row in rows}


def test_openai_answers_exactly_once_through_429_500_and_malformed_replies(db):
    def script(n, body):
        if n == 0:
            return {"status": 429, "retry_after": 0.05}
        if n == 1:
            return {"status": 500}
        if n == 5:
            return {"content": "Sure! I think the answer is probably B."}
        return None

    with FakeLLMServer(script) as server:
        args = ["answer", "--model", "openai:test-model", "--base-url", server.url + "/v1",
                "--conditions", "2.1", "--variant", "standard", "--limit", "12", "--concurrency", "4"]
        out = hindsight(db, *args).output
        assert "12 answered now" in out and "1 not the expected JSON" in out
        assert len(server.requests) == 14                       # 12 + the two retried failures
        again = hindsight(db, *args).output
        assert "0 answered now, 12 already stored" in again
        assert len(server.requests) == 14                       # an identical rerun makes no call

    assert scalar(db, "select count(*) from raw.llm_calls where status = 'ok'") == 12
    assert scalar(db, "select count(distinct call_id) from raw.llm_calls") == 12
    assert scalar(db, "select count(*) from raw.responses") == 12
    calls = query(db, "select provider, model, base_url_host, reported_model, input_tokens, prompt_template_version "
                      "from raw.llm_calls limit 1")[0]
    assert calls[:4] == ("openai", "openai:test-model", f"127.0.0.1:{server.port}", "test-model-served")
    assert calls[4] >= 100 and calls[5] == "appendix-c-1"
    # the malformed reply is kept with its raw text and status, and scored as invalid
    hindsight(db, "build")
    assert_dbt_passed(db)
    kept = query(db, "select t.answer, f.response_parse_status, f.parse_status, f.provider from fct_answers f "
                     "inner join fct_answer_texts t using (response_id) where f.response_parse_status <> 'ok'")
    assert kept == [("Sure! I think the answer is probably B.", "not_json", "invalid", "openai")]
    assert scalar(db, "select count(*) from fct_answers where model = 'openai:test-model'") == 12
    status = hindsight(db, "status").output
    line = next(row for row in status.splitlines() if row.strip().startswith("openai:test-model"))
    # ok calls, failed, not the expected JSON, beyond the context window, answered to a shortened prompt
    assert line.split()[1:8] == ["answer", "direct", "12", "0", "1", "0", "0"]
    assert int(line.split()[8]) == sum(range(100, 114)) - 100 - 101   # tokens in of the 12 served replies


def test_request_bodies_carry_appendix_c_and_nothing_hidden(db):
    with FakeLLMServer() as server:
        hindsight(db, "answer", "--model", "openai:m", "--base-url", server.url + "/v1", "--limit", "60",
                  "--variant", "warning", "--warning-position", "start")
        bodies = [json.dumps(body) for body in server.requests]
        systems = [body["messages"][0]["content"] for body in server.requests]
    assert len(bodies) == 60
    assert all(s.startswith("Use your medical expertise for this reasoning task;") for s in systems)
    assert any("You answer clinical reasoning questions using only the provided textual time series (TTS)." in s for s in systems)
    assert any("You answer clinical reasoning questions using only the provided case report." in s for s in systems)
    secrets = hidden_values(db)
    for body in bodies:
        assert not any(name in body for name in HIDDEN_NAMES)
        assert not any(value in body for value in secrets)
    assert query(db, "select distinct warning_position from raw.llm_calls") == [("start",)]


def test_anthropic_messages_with_retry_after(db):
    with FakeLLMServer(lambda n, body: {"status": 429, "retry_after": 0.05} if n < 2 else None) as server:
        out = hindsight(db, "answer", "--model", "anthropic:claude-test", "--base-url", server.url,
                        "--conditions", "0", "--variant", "standard", "--limit", "5").output
        assert "5 answered now" in out
        assert server.requests[-1]["system"].startswith("You answer clinical reasoning questions using only the provided case report.")
        assert server.requests[-1]["messages"][0]["role"] == "user"
        assert len(server.requests) == 7
    assert query(db, "select distinct provider, reported_model from raw.llm_calls") == [("anthropic", "claude-test-served")]


def test_timeouts_fail_the_call_and_a_rerun_completes_it(db):
    with FakeLLMServer(lambda n, body: {"sleep": 1.5} if n < 2 else None) as server:
        out = hindsight(db, "answer", "--model", "openai:m", "--base-url", server.url + "/v1", "--limit", "3",
                        "--conditions", "2.1", "--variant", "standard", "--timeout", "0.5", "--max-retries", "1",
                        "--concurrency", "1", expect=1).output
        assert "1 failed" in out and "Timeout" in out
        assert scalar(db, "select count(*) from raw.llm_calls where status = 'error'") == 1
        before = len(server.requests)
        out = hindsight(db, "answer", "--model", "openai:m", "--base-url", server.url + "/v1", "--limit", "3",
                        "--conditions", "2.1", "--variant", "standard").output
        assert "1 answered now, 2 already stored" in out and len(server.requests) == before + 1
    assert scalar(db, "select count(*) from raw.responses") == 3


def test_an_interrupted_run_resumes_with_nothing_lost_or_duplicated(db):
    env = cli_env(db)
    # 40 calls at concurrency 2 take 10 s: the interrupt lands mid-run even on a loaded machine
    with FakeLLMServer(delay=0.5) as server:
        args = [sys.executable, "-m", "ingest.cli", "answer", "--model", "openai:m", "--base-url", server.url + "/v1",
                "--limit", "40", "--concurrency", "2", "--conditions", "1.1"]
        # started as a shell without job control starts a background job: SIGINT ignored, inherited
        child = subprocess.Popen(args, cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        deadline = time.time() + 30
        while len(server.requests) < 10 and time.time() < deadline:
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        child.wait(timeout=30)
        stored = scalar(db, "select count(*) from raw.responses")
        assert 0 < stored < 40
        sent_before = len(server.requests)
        done = subprocess.run(args, cwd=PROJECT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"{40 - stored} answered now, {stored} already stored" in done.stdout
        assert len(server.requests) - sent_before == 40 - stored
    assert scalar(db, "select count(*) from raw.responses") == 40
    assert scalar(db, "select count(distinct response_id) from raw.responses") == 40


def test_no_key_reaches_the_warehouse_or_the_output(db):
    with FakeLLMServer() as server:
        out = hindsight(db, "answer", "--model", "openai:m", "--base-url", server.url + "/v1", "--limit", "3").output
        sent = {k.lower(): v for k, v in server.headers[0].items()}
        assert sent["authorization"] == f"Bearer {SECRET}"   # it was used
    assert SECRET not in out
    assert SECRET.encode() not in db.read_bytes()


def test_narratives_then_condition_3_answers(db):
    with FakeLLMServer() as server:
        hindsight(db, "generate", "narratives", "--model", "openai:m", "--base-url", server.url + "/v1", "--limit", "6")
        assert server.requests[0]["messages"][0]["content"].startswith(
            "You are a medical expert tasked with reconstructing a synthetic clinical case report")
        assert scalar(db, "select count(*) from raw.synthetic_narratives where model = 'openai:m'") == 6
        hindsight(db, "build", *FAST_BUILD)
        n = scalar(db, "select count(*) from fct_answer_requests where narrative_model = 'openai:m'")
        assert n > 0
        out = hindsight(db, "answer", "--model", "openai:m", "--base-url", server.url + "/v1", "--conditions", "3.1,3.2").output
        assert f"{n} calls selected, {n} answered now" in out       # one narrative per question, scope and source


def test_judge_scores_free_responses_individually_and_in_pairs(db):
    def script(n, body):
        if body["messages"][0]["content"].startswith("You answer"):
            return None
        user = json.loads(body["messages"][-1]["content"])
        if "full_condition_answer" in user:
            return {"content": json.dumps({"full_equals_masked": False, "full_accuracy_score": 0, "masked_accuracy_score": 1,
                                           "full_htr_score": 1, "masked_htr_score": 0, "hbr_score": 1})}
        if n % 7 == 0:
            return {"content": json.dumps({"accuracy_score": 0.7, "htr_score": 0})}   # not in {0, 0.5, 1}
        return {"content": "```json\n" + json.dumps({"accuracy_score": 0.5, "htr_score": 1}) + "\n```"}

    with FakeLLMServer(script) as server:
        hindsight(db, "answer", "--model", "openai:m", "--base-url", server.url + "/v1", "--conditions", "2.1",
                  "--variant", "standard")
        hindsight(db, "build", *FAST_BUILD)
        out = hindsight(db, "judge", "--model", "openai:judge", "--base-url", server.url + "/v1").output
        judge_bodies = [b for b in server.requests if not b["messages"][0]["content"].startswith("You answer")]
    assert any(b["messages"][0]["content"].startswith("You are evaluating an answer to a clinical temporal-QA question.")
               for b in judge_bodies)
    assert any(b["messages"][0]["content"].startswith("You are evaluating paired answers") for b in judge_bodies)
    individual = scalar(db, "select count(*) from raw.judgments where kind = 'individual'")
    paired = scalar(db, "select count(*) from raw.judgments where kind = 'paired'")
    invalid = scalar(db, "select count(*) from raw.llm_calls where purpose = 'judge' and parse_status = 'invalid_scores'")
    # identical judge prompts (same question and answer text) share one call
    assert paired == 16 and 0 < individual < 32 and invalid > 0
    assert "not the expected JSON" in out
    hindsight(db, "build")
    assert_dbt_passed(db)
    scored = query(db, """select count(*) filter (where htr = 1), count(*) filter (where htr is null)
                          from fct_answers where format = 'free response'""")[0]
    assert scored == (individual, 32 - individual)   # answers whose judge reply was invalid stay unscored
    assert query(db, """select distinct eval_target, air, hbr from fct_answer_pairs
                        where format = 'free response' order by all""") == [("both", 1.0, 1.0), ("hindsight_bias", 1.0, None)]


def _questions_from(body, count=10, bad_cutoff=False, design=True):
    """A generator reply: `design` follows §3.3 (2/3/5 accuracy/hindsight_bias/both, the three formats,
    four ordinal options); otherwise every question is a `both` true/false one."""
    tts = json.loads(body["messages"][-1]["content"].split("TTS:\n", 1)[1])
    targets = ["accuracy"] * 2 + ["hindsight_bias"] * 3 + ["both"] * 5
    options = ["A. <10%", "B. 10-30%", "C. 31-60%", "D. >60%"]
    out = []
    for i in range(count):
        target = targets[i] if design else "both"
        fmt = ["true/false", "multiple choice", "free response"][i % 3] if design else "true/false"
        answers = {"true/false": ("true", "false"), "multiple choice": (options[0], options[3]),
                   "free response": ("no shock", "septic shock")}[fmt]
        event = tts[min(i, len(tts) - 1)]
        out.append({"question": f"Was the course expected ({i})?", "format": fmt,
                    "options": options if fmt == "multiple choice" else None,
                    "options_type": "ordinal" if fmt == "multiple choice" else None, "eval_target": target,
                    "reference_time": "early",
                    "early_cutoff": {"event": event["event"], "time": "about a day" if bad_cutoff and i == 0 else str(event["time"])},
                    "correct_answer": answers[0], "hindsight_trap": None if target == "accuracy" else answers[1],
                    "hindsight_trap_explanation": None if target == "accuracy" else "later events"})
    return json.dumps(out)


def test_question_generation_validates_repairs_once_and_loads(db):
    cases = ["demo-sepsis-01", "demo-sepsis-02", "demo-sepsis-03"]

    def script(n, body):
        first_turn = body["messages"][1]["content"]
        if len(body["messages"]) == 2:            # first attempt
            if "obstructing" in first_turn or "ureteroscopic" in first_turn:   # case 02: invalid, repaired below
                return {"content": _questions_from(body, count=9, bad_cutoff=True)}
            if "fascia" in first_turn:              # case 03: invalid, then valid questions off the design
                return {"content": "I cannot produce questions for this case."}
            # case 01: valid questions off the design (all `both`, one format): repaired below
            return {"content": "```json\n" + _questions_from(body, design=False) + "\n```"}
        if "fascia" in first_turn:
            return {"content": _questions_from({"messages": body["messages"][:2]}, design=False)}
        return {"content": _questions_from({"messages": body["messages"][:2]})}

    with FakeLLMServer(script) as server:
        before = scalar(db, "select count(*) from raw.questions")
        out = hindsight(db, "generate", "questions", "--model", "openai:gen", "--base-url", server.url + "/v1",
                        "--cases", ",".join(cases)).output
        first = [b for b in server.requests if len(b["messages"]) == 2]
        repairs = [b for b in server.requests if len(b["messages"]) == 4]
        # a rerun is answered from the ledger and adds nothing
        sent = len(server.requests)
        again = hindsight(db, "generate", "questions", "--model", "openai:gen", "--base-url", server.url + "/v1",
                          "--cases", ",".join(cases)).output
        assert "0 answered now" in again and len(server.requests) == sent
    assert len(first) == 3 and len(repairs) == 3
    assert first[0]["messages"][0]["content"].startswith("You are generating difficult clinical reasoning questions")
    assert all("did not pass validation" in r["messages"][-1]["content"] for r in repairs)
    design = next(r for r in repairs if "0 accuracy" in r["messages"][-1]["content"])["messages"][-1]["content"]
    assert "eval targets 0 accuracy, 0 hindsight_bias, 10 both instead of 2 accuracy, 3 hindsight_bias, 5 both" in design
    assert "no free response and no multiple choice question" in design
    assert "20 questions loaded" in out
    assert scalar(db, "select count(*) from raw.questions") == before + 20
    loaded = query(db, """select case_id, payload ->> 'eval_target' as target, count(*) from raw.questions
                          where case_id in ('demo-sepsis-01', 'demo-sepsis-02', 'demo-sepsis-03')
                            and load_id = (select max(load_id) from raw.questions) group by all order by all""")
    assert [row for row in loaded if row[0] == "demo-sepsis-03"] == []     # off the design after its repair
    assert {(c, t): n for c, t, n in loaded} == {(c, t): n for c in ("demo-sepsis-01", "demo-sepsis-02")
                                                 for t, n in (("accuracy", 2), ("hindsight_bias", 3), ("both", 5))}
    rejected = query(db, "select source_file, reason from raw.rejected_rows where kind = 'generated_questions'")
    assert {source for source, _ in rejected} == {"openai:gen:sepsis/demo-sepsis-03"}   # once, despite the rerun
    assert {reason for _, reason in rejected} == {
        "question set rejected: eval targets 0 accuracy, 0 hindsight_bias, 10 both instead of 2 accuracy, 3 hindsight_bias, 5 both",
        "question set rejected: no free response and no multiple choice question (the design mixes all three formats)"}
    assert scalar(db, "select count(*) from raw.questions") == before + 20


def test_reasoning_models_get_the_token_parameter_and_temperature_they_take(db):
    """gpt-5.x and o-series refuse max_tokens and any temperature but 1 with HTTP 400 (the loopback
    server answers as the API does); the runner sends what each model takes, by model name."""
    args = ["--base-url", None, "--conditions", "2.1", "--variant", "standard", "--limit", "3", "--temperature", "0.2"]
    with FakeLLMServer() as server:
        args[1] = server.url + "/v1"
        out = hindsight(db, "answer", "--model", "openai:gpt-5.4-mini", *args).output
        assert "3 answered now" in out and "0 failed" in out
        assert "temperature 0.2 not sent: gpt-5.4-mini takes only its default temperature (1)" in out
        reasoning = list(server.requests)
        hindsight(db, "answer", "--model", "openai:qwen2.5-7b", *args)       # an OpenAI-compatible server
        local = server.requests[len(reasoning):]
    assert all("max_completion_tokens" in b and "max_tokens" not in b and "temperature" not in b for b in reasoning)
    assert all(b["max_tokens"] == 1024 and b["temperature"] == 0.2 and "max_completion_tokens" not in b for b in local)
    sent = query(db, """select model, temperature, settings_sent::varchar from raw.llm_calls
                        where model in ('openai:gpt-5.4-mini', 'openai:qwen2.5-7b') group by all order by model""")
    assert [(m, t, json.loads(s)) for m, t, s in sent] == [
        ("openai:gpt-5.4-mini", None, {"max_completion_tokens": 1024}),
        ("openai:qwen2.5-7b", 0.2, {"max_tokens": 1024, "temperature": 0.2})]


def test_a_refused_parameter_stops_the_run_and_is_reported_once_with_the_fix(db, tmp_path):
    """A model the capability seed does not know as a reasoning model: the API's 400 is reported once,
    with the fix, and the run stops instead of failing every request."""
    seed = capabilities.SEED.read_text()
    edited = tmp_path / "model_capabilities.csv"
    edited.write_text(seed.replace("openai,gpt-5*,max_completion_tokens,default_only", "openai,gpt-5*,max_tokens,any"))
    capabilities.SEED, original = edited, capabilities.SEED
    capabilities._rows.cache_clear()
    try:
        with FakeLLMServer() as server:
            done = hindsight(db, "answer", "--model", "openai:gpt-5.5", "--base-url", server.url + "/v1",
                             "--conditions", "2.1", "--variant", "standard", "--limit", "40", "--concurrency", "1",
                             expect=1, in_process=True)
            assert len(server.requests) == 1                         # not retried, not repeated for 40 requests
    finally:
        capabilities.SEED = original
        capabilities._rows.cache_clear()
    assert done.output.count("Unsupported parameter: 'max_tokens'") == 1
    assert "Fix: set the model's row in seeds/model_capabilities.csv" in done.output
    assert query(db, "select status, count(*) from raw.llm_calls group by all") == [("error", 1)]


def test_the_responses_api_sends_max_output_tokens_and_reads_the_message_items(db):
    with FakeLLMServer() as server:
        out = hindsight(db, "answer", "--model", "openai:gpt-5.5", "--api", "responses", "--base-url", server.url + "/v1",
                        "--conditions", "2.1", "--variant", "standard", "--limit", "3", "--max-tokens", "16000").output
        assert "3 answered now" in out and "0 failed" in out
        bodies = list(server.requests)
        again = hindsight(db, "answer", "--model", "openai:gpt-5.5", "--api", "responses", "--base-url",
                          server.url + "/v1", "--conditions", "2.1", "--variant", "standard", "--limit", "3",
                          "--max-tokens", "16000").output
        assert "0 answered now, 3 already stored" in again and len(server.requests) == 3
    assert all(b["max_output_tokens"] == 16000 and "temperature" not in b and "messages" not in b for b in bodies)
    assert all(b["instructions"].startswith("You answer clinical reasoning questions") for b in bodies)
    assert all([turn["role"] for turn in b["input"]] == ["user"] for b in bodies)
    answers = query(db, """select answer, payload ->> 'response_parse_status' from raw.responses
                           where model = 'openai:gpt-5.5'""")
    assert len(answers) == 3 and {status for _, status in answers} == {"ok"}       # the message item, not the reasoning
    sent = query(db, "select distinct settings_sent::varchar from raw.llm_calls where model = 'openai:gpt-5.5'")
    assert [json.loads(row[0]) for row in sent] == [{"max_output_tokens": 16000}]
    assert "Responses API is OpenAI's" in hindsight(db, "answer", "--model", "anthropic:claude-x", "--api", "responses",
                                                     expect=2).stderr


def test_identical_prompts_are_separate_calls_and_samples_are_calls_averaged_by_the_metrics(db, tmp_path):
    """A question whose cutoff is at or after its last event has identical full and masked prompts:
    two calls, flagged in fct_answer_pairs. `--samples 3` makes three calls per request (`--limit`
    counts requests), a rerun none; the marts keep every sample and the metrics average them."""
    event, hours = query(db, """select event, time_hours from fct_tts_events where case_id = 'demo-sepsis-01'
                                and source = 'H' order by time_hours desc limit 1""")[0]
    late = {"case_id": "demo-sepsis-01", "question": "Was the patient discharged alive?", "format": "true/false",
            "options": None, "options_type": None, "eval_target": "accuracy", "reference_time": "discharge",
            "early_cutoff": {"event": event, "time": hours}, "correct_answer": "true", "hindsight_trap": None,
            "hindsight_trap_explanation": None}
    (tmp_path / "late.jsonl").write_text(json.dumps(late) + "\n")
    hindsight(db, "load", "questions", str(tmp_path / "late.jsonl"))
    hindsight(db, "build", *FAST_BUILD)
    identical = scalar(db, """select count(*) from (select question_id from fct_answer_requests
                              where condition = '2.1' and prompt_variant = 'standard'
                              group by question_id having count(distinct tts_json) = 1 and count(*) = 2)""")
    assert identical > 0, "the demo corpus needs a question whose cutoff is at or after its last event"
    n_requests = scalar(db, "select count(*) from fct_answer_requests where condition = '2.1' and prompt_variant = 'standard'")
    args = ["answer", "--model", "openai:qwen2.5-7b", "--conditions", "2.1", "--variant", "standard", "--concurrency", "8"]
    with FakeLLMServer() as server:
        out = hindsight(db, *args, "--base-url", server.url + "/v1", "--samples", "3", "--limit", "10").output
        assert "30 calls selected, 30 answered now" in out and len(server.requests) == 30
        out = hindsight(db, *args, "--base-url", server.url + "/v1", "--samples", "3").output
        assert f"{3 * n_requests - 30} answered now, 30 already stored" in out
        again = hindsight(db, *args, "--base-url", server.url + "/v1", "--samples", "3").output
        assert "0 answered now" in again and len(server.requests) == 3 * n_requests
        bodies = [json.dumps(b["messages"]) for b in server.requests]
    # identical full and masked prompts were each sent three times: six calls, not three
    repeats = {text: bodies.count(text) for text in bodies}
    assert sorted(set(repeats.values())) == [3, 6] and list(repeats.values()).count(6) == identical
    assert scalar(db, "select count(distinct call_id) from raw.llm_calls") == 3 * n_requests
    assert query(db, "select sample_index, count(*) from raw.llm_calls group by all order by 1") == \
        [(0, n_requests), (1, n_requests), (2, n_requests)]

    hindsight(db, "build", *FAST_BUILD)
    assert scalar(db, "select count(*) from fct_answers where model = 'openai:qwen2.5-7b' and is_latest_in_cell") == 3 * n_requests
    pairs = query(db, """select identical_contexts, count(*), count(distinct question_id) from fct_answer_pairs
                         where model = 'openai:qwen2.5-7b' group by all order by 1""")
    assert pairs == [(False, 3 * (n_requests // 2 - identical), n_requests // 2 - identical), (True, 3 * identical, identical)]
    # one question, three samples: the metrics count the question once, at the mean of its samples
    per_question = query(db, """select count(*), avg(air) from (
                                    select question_id, avg(air) as air from fct_answer_pairs
                                    where model = 'openai:qwen2.5-7b' and cohort = 'sepsis' and air is not null
                                    group by question_id)""")[0]
    metric = query(db, """select n_questions, estimate from agg_metrics where model = 'openai:qwen2.5-7b' and metric = 'air'
                          and condition = '2.1' and prompt_variant = 'standard' and cohort = 'sepsis'""")[0]
    assert metric[0] == per_question[0] and metric[1] == pytest.approx(per_question[1])


def test_truncated_replies_are_flagged_and_reasked_only_on_request_with_a_larger_budget(db):
    """A reasoning model whose budget runs out returns `finish_reason: length` and empty content: the
    answer is stored as truncated (not as a bad answer), not re-asked by a rerun, and re-asked as new
    calls by `--retry-truncated` with a larger budget; the truncated replies stay in the ledger."""
    args = ["answer", "--model", "openai:gpt-5.4-mini", "--conditions", "0", "--variant", "standard", "--limit", "4"]
    with FakeLLMServer(min_complete_tokens=4096) as server:
        url = ["--base-url", server.url + "/v1"]
        out = hindsight(db, *args, *url).output
        assert "4 answered now" in out and "0 not the expected JSON" in out and "4 truncated at the token limit" in out
        assert "0 answered now, 4 already stored" in hindsight(db, *args, *url).output and len(server.requests) == 4
        refused = hindsight(db, *args, *url, "--retry-truncated", expect=2)
        assert "pass --max-tokens above 1024" in refused.stderr and len(server.requests) == 4
        out = hindsight(db, *args, *url, "--retry-truncated", "--max-tokens", "8000").output
        assert "4 answered now" in out and "0 truncated" in out and len(server.requests) == 8
        assert "0 calls selected" in hindsight(db, *args, *url, "--retry-truncated", "--max-tokens", "8000").output
    assert all(b["max_completion_tokens"] == 8000 for b in server.requests[4:])
    ledger = query(db, """select max_tokens, finish_reason, parse_status, count(*) from raw.llm_calls
                          group by all order by 1""")
    assert ledger == [(1024, "length", "truncated", 4), (8000, "stop", "ok", 4)]
    hindsight(db, "build", *FAST_BUILD)
    answers = query(db, """select parse_status, finish_reason, is_latest_in_cell, count(*) from fct_answers
                           where model = 'openai:gpt-5.4-mini' group by all order by 1""")
    assert [row for row in answers if row[0] == "truncated"] == [("truncated", "length", False, 4)]
    assert sum(row[3] for row in answers if row[2]) == 4 and all(row[0] != "truncated" for row in answers if row[2])
    completion = query(db, """select n_answers, n_truncated, n_truncated_in_use, truncation_rate from agg_answer_completion
                              where model = 'openai:gpt-5.4-mini'""")
    assert [tuple(row) for row in completion] == [(8, 4, 0, 0.5)]
    status = hindsight(db, "status").output
    assert "replies cut off by the token limit" in status and "openai:gpt-5.4-mini  0          8        4" in status


def test_claude_with_extended_thinking_keeps_thinking_apart_and_temperature_at_one(db):
    args = ["answer", "--conditions", "2.1", "--variant", "standard", "--limit", "3"]
    with FakeLLMServer() as server:
        url = ["--base-url", server.url]
        bad = hindsight(db, *args, *url, "--model", "anthropic:claude-sonnet-4-5", "--thinking-budget", "512", expect=2)
        assert "at least 1024 tokens and below --max-tokens" in bad.stderr and not server.requests
        out = hindsight(db, *args, *url, "--model", "anthropic:claude-sonnet-4-5", "--thinking-budget", "4000",
                        "--max-tokens", "12000", "--temperature", "0.2").output
        assert "3 answered now" in out and "0 failed" in out
        assert "temperature 0.2 not sent: extended thinking takes temperature 1 only" in out
        thinking = list(server.requests)
        out = hindsight(db, *args, *url, "--model", "anthropic:claude-3-5-haiku", "--thinking-budget", "4000",
                        "--max-tokens", "12000").output
        assert "thinking budget 4000 not sent: claude-3-5-haiku has no extended thinking" in out
        plain = server.requests[3:]
    assert all(b["thinking"] == {"type": "enabled", "budget_tokens": 4000} and b["max_tokens"] == 12000
               and "temperature" not in b for b in thinking)
    assert all("thinking" not in b for b in plain)
    calls = query(db, """select reasoning_text, response_text, parse_status, finish_reason from raw.llm_calls
                         where model = 'anthropic:claude-sonnet-4-5'""")
    assert len(calls) == 3 and all(r[0].startswith("The later events point one way") for r in calls)
    assert all(json.loads(r[1])["answer"] and "later events" not in r[1] and r[2:] == ("ok", "end_turn") for r in calls)


def test_profiles_and_reasoning_effort_reach_each_api_as_it_takes_them(db):
    """The requests mart carries its profile; `--profile` picks another of the same kind, flags override
    single fields, and reasoning effort goes where each endpoint takes it (and nowhere it would be refused)."""
    assert query(db, "select distinct sampling_profile, samples, max_output_tokens from fct_answer_requests") == \
        [("clinical_answer", 1, 1024)]
    args = ["answer", "--conditions", "0", "--variant", "standard", "--limit", "2"]
    with FakeLLMServer() as server:
        url = ["--base-url", server.url + "/v1"]
        hindsight(db, *args, *url, "--model", "openai:gpt-5.5", "--profile", "clinical_answer_reasoning")
        hindsight(db, *args, *url, "--model", "openai:gpt-5.5", "--api", "responses", "--reasoning-effort", "high",
                  "--response-format", "json_object")
        out = hindsight(db, *args, *url, "--model", "openai:qwen2.5-7b", "--reasoning-effort", "high").output
        assert "reasoning effort 'high' not sent: qwen2.5-7b takes none" in out and "0 failed" in out
        wrong = hindsight(db, *args, *url, "--model", "openai:gpt-5.5", "--profile", "hb_lap", expect=2)
        assert "profile 'hb_lap' is for hb_lap requests" in wrong.stderr
        bodies = list(server.requests)
    assert [(b["max_completion_tokens"], b["reasoning_effort"]) for b in bodies[:2]] == [(16000, "medium")] * 2
    assert [(b["max_output_tokens"], b["reasoning"], b["text"]) for b in bodies[2:4]] == \
        [(1024, {"effort": "high"}, {"format": {"type": "json_object"}})] * 2
    assert all("reasoning_effort" not in b for b in bodies[4:6]) and len(bodies) == 6
    profiles = query(db, "select distinct model, sampling_profile from raw.llm_calls order by 1, 2")
    # the second setup of gpt-5.5 is stored under its own label: the two never mix
    assert profiles == [("openai:gpt-5.5", "clinical_answer_reasoning"),
                        ("openai:gpt-5.5[response_format=json_object,reasoning_effort=high,api=responses]", "clinical_answer"),
                        ("openai:qwen2.5-7b", "clinical_answer")]


def test_answers_stored_before_samples_are_sample_0_and_not_asked_again(db):
    """A warehouse written before a call was one sample of one request: its calls have the old ids
    (identical prompts shared one) and its answers no sample index. A rerun asks nothing again, and a
    rebuild keeps every answer, as sample 0."""
    import hashlib

    from conftest import bring_in
    from ingest.collect.store import store_path
    from ingest.db import fetch_dicts, open_warehouse
    from ingest.llm.prompts import answer_messages
    from ingest.llm.providers import Settings, make_provider
    from ingest.llm.runner import Job, legacy_call_id

    args = ["answer", "--model", "openai:qwen2.5-7b", "--conditions", "2.1", "--variant", "standard", "--limit", "6"]
    with FakeLLMServer() as server:
        url = server.url + "/v1"
        hindsight(db, *args, "--base-url", url)
        assert len(server.requests) == 6
        # rewrite the ledger and the answers as the previous version stored them: in the warehouse, with
        # no runs' store beside it (the previous version had none)
        bring_in(db)
        for leftover in store_path(db).parent.glob(store_path(db).name + "*"):
            leftover.unlink()
        with open_warehouse(db) as con:
            provider = make_provider("openai:qwen2.5-7b", url, Settings())
            for row in fetch_dicts(con, "select * from fct_answer_requests where condition = '2.1' and prompt_variant = 'standard'"):
                old = legacy_call_id(provider, "openai:qwen2.5-7b", url, Job("answer", row["request_id"],
                                     answer_messages(row, "end"), {}), Settings())
                con.execute("""update raw.llm_calls set call_id = ?, sample_index = null, finish_reason = null,
                               sampling_profile = null where target_id = ?""", [old, row["request_id"]])
                response_id = "r_" + hashlib.sha256(f"{old}|{row['request_id']}".encode()).hexdigest()[:24]
                con.execute("""update raw.responses set response_id = ?, payload = json_merge_patch(payload,
                               json_object('call_id', ?, 'sample_index', null, 'finish_reason', null))
                               where payload ->> 'request_id' = ?""", [response_id, old, row["request_id"]])
        assert scalar(db, "select count(*) from raw.responses where payload ->> 'sample_index' is not null") == 0
        again = hindsight(db, *args, "--base-url", url).output
        assert "0 answered now, 6 already stored" in again and len(server.requests) == 6
    assert scalar(db, "select count(*) from raw.responses") == 6
    hindsight(db, "build", *FAST_BUILD)
    assert query(db, "select sample_index, count(*) from fct_answers group by all") == [(0, 6)]
