"""Auditing a new model with HindsightBench inside the warehouse (issue 14): plan, smoke, inspection
gate, tiers asked exactly once through the runner against loopback OpenAI and Anthropic servers
(direct and batch), truncated replies, and one path for released and collected replies. Runs on
the fictional demo panel (ingest/llm/simulators/panel.py), so it needs nothing outside the clone;
the byte-level and parser golden tests on the release are in test_hindsightbench.py."""
from __future__ import annotations

import hashlib
import json
import shutil

import duckdb
import pytest

from conftest import hindsight, new_warehouse, query, scalar
from fake_llm_server import FakeLLMServer
from ingest.llm.simulators.panel import write_panel
from ingest.stats.hb_parsers import parse_lap, parse_rec

pytestmark = pytest.mark.slow

SECRET = "sk-test-DO-NOT-STORE-audit-1234567890"
REQUESTS_BUILD = ["--select", "+fct_hb_requests", "+int_hb_dates", "model_prices", "hb_registry"]
REGISTRY = {"model_key", "row_version", "display", "generation", "provider", "tier", "sampling", "serving_quantization",
            "thinking_regime", "retrieval", "vendor_cutoff", "vendor_cutoff_read_on", "cutoff_vs_vendor_months",
            "published_lap_at_chance", "undefined_reasons"}


@pytest.fixture(scope="module")
def panel_warehouse(tmp_path_factory):
    folder = tmp_path_factory.mktemp("audit")
    db = new_warehouse(folder)
    out = hindsight(db, "load", "hindsightbench", write_panel(folder / "panel")).stdout
    assert "models (none new)" in out
    hindsight(db, "build", *REQUESTS_BUILD)
    return db


@pytest.fixture
def db(panel_warehouse, tmp_path, monkeypatch):
    copy = tmp_path / "w.duckdb"
    shutil.copy(panel_warehouse, copy)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    return copy


def row(db, key: str) -> dict:
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute("select * from agg_hb_audit_rows where model_key = ?", [key])
        names = [d[0] for d in cursor.description]
        found = cursor.fetchall()
    assert len(found) == 1, key
    return dict(zip(names, found[0]))


def test_a_new_model_from_plan_to_leaderboard_row_through_the_runner(db, tmp_path):
    with FakeLLMServer() as server:
        model, url = ["--model", "openai:gpt-4.1-mini"], ["--base-url", server.url + "/v1", "--concurrency", "50"]
        plan = hindsight(db, "audit", "plan", *model, "--tier", "smoke", "--vendor-cutoff", "2024-06").stdout
        assert "registered 'gpt-4.1-mini' (row version 1)" in plan
        assert "total: 8 calls, 0 stored, 8 to ask" in plan and "$" in plan          # priced from seeds/model_prices.csv
        assert "7,482 calls" in hindsight(db, "audit", "plan", *model, "--tier", "full").stdout
        assert "3,098 calls" in hindsight(db, "audit", "plan", *model, "--tier", "reduced").stdout
        assert "6,450 calls" in hindsight(db, "audit", "plan", *model, "--tier", "full-1rep").stdout

        refused = hindsight(db, "audit", "run", *model, *url, "--tier", "full", expect=2)
        assert "has no inspected smoke tier" in refused.stderr and not server.requests
        assert "8 calls selected, 8 answered now" in hindsight(db, "audit", "run", *model, *url, "--tier", "smoke").stdout
        prompts = dict(query(db, "select user_sha256, system_text from fct_hb_requests where in_smoke"))
        for body in server.requests:
            system, user = body["messages"]
            assert hashlib.sha256(user["content"].encode()).hexdigest() in prompts      # the bytes dbt built
            assert system == {"role": "system", "content": prompts[hashlib.sha256(user["content"].encode()).hexdigest()]}
            assert body["temperature"] == 0.2 and body["max_tokens"] == 16384
        refused = hindsight(db, "audit", "run", *model, *url, "--tier", "reduced", expect=2)
        assert "has no inspected smoke tier" in refused.stderr
        inspected = hindsight(db, "audit", "inspect", *model, "--accept").stdout
        assert inspected.count(" ok ") == 8 and "recorded: 8 of 8 smoke cells parsed" in inspected

        reduced = hindsight(db, "audit", "run", *model, *url, "--tier", "reduced").stdout
        assert "3098 calls selected, 3090 answered now, 8 already stored" in reduced and len(server.requests) == 3098
        rec = [b for b in server.requests if "estimated_date" in b["messages"][1]["content"]]
        assert len(rec) == 258 and all(b["temperature"] == 0 and b["response_format"] == {"type": "json_object"} for b in rec)
        lap = [b for b in server.requests if "go up or down" in b["messages"][1]["content"]]
        assert len(lap) == 2580 and all(b["temperature"] == 1.0 and b["max_tokens"] == 8192 for b in lap)

        full = hindsight(db, "audit", "run", *model, *url, "--tier", "full").stdout
        assert "7482 calls selected, 4384 answered now, 3098 already stored" in full and len(server.requests) == 7482
        # replicates and LAP samples are distinct calls of identical prompts
        assert len({json.dumps(b, sort_keys=True) for b in server.requests}) < 7482
        assert "0 answered now, 7482 already stored" in hindsight(db, "audit", "run", *model, *url, "--tier", "full").stdout
        assert len(server.requests) == 7482
    assert scalar(db, "select count(*) from raw.llm_calls where purpose like 'hb_%'") == 7482
    assert scalar(db, "select count(*) from raw.hb_responses") == 7482

    hindsight(db, "build")
    audited = row(db, "gpt-4.1-mini")
    assert audited["cells"] == 2064 and audited["valid_sketch_rate"] == 1.0 and audited["parser_version"] == "v2"
    assert (audited["provider"], audited["tier"], audited["retrieval"], audited["serving_quantization"]) == ("openai", "full", "none", "api")
    assert audited["vendor_cutoff"] == "2024-06" and audited["row_version"] == 1
    assert audited["rec_pre_n"] == 240 and audited["lap_pre"] == 1.0          # the loopback always answers
    assert audited["e2_est"] is not None and audited["e2_lo"] <= audited["e2_est"] <= audited["e2_hi"]
    board = hindsight(db, "leaderboard", "--out", tmp_path / "board").stdout
    assert "gpt-4.1-mini" in (tmp_path / "board.csv").read_text() and "models" in board
    # a re-audit under another serving configuration is a new row version, never an overwrite
    again = hindsight(db, "audit", "plan", "--model", "openai:gpt-4.1-mini", "--tier", "smoke", "--serving-quantization", "fp8").stdout
    assert "row version 2" in again
    assert query(db, "select row_version, serving_quantization from raw.hb_registry order by row_version") == [(1, "api"), (2, "fp8")]


def test_truncated_replies_leave_no_cell_and_are_asked_again_only_on_request(db):
    def script(number, body):
        user = body["messages"][-1]["content"]
        if body.get("max_tokens") == 16384 and "Decision time point: 2008-10-15" in user and "revised_value" not in user:
            return {"truncate": True}        # the D cell of 2008-10-15 runs out of tokens, empty content
        return None

    with FakeLLMServer(script) as server:
        args = ["--model", "openai:gpt-4.1-mini", "--base-url", server.url + "/v1", "--tier", "smoke"]
        assert "1 truncated at the token limit" in hindsight(db, "audit", "run", *args).stdout
        refused = hindsight(db, "audit", "inspect", "--model", "openai:gpt-4.1-mini", "--accept", expect=2)
        assert "1 smoke cells of 'gpt-4.1-mini' have no complete reply (hb:arm:D:2008-10-15:r1)" in refused.stderr
        assert "0 answered now, 8 already stored" in hindsight(db, "audit", "run", *args).stdout    # not asked again
        hindsight(db, "build", "--select", "+agg_hb_parser_versions")
        assert scalar(db, "select count(*) from intermediate.int_hb_cells where model_key = 'gpt-4.1-mini'") == 7
        assert query(db, "select truncated_replies, cells from agg_hb_parser_versions where parser_version = 'v2'") == [(1, 7)]
        small = hindsight(db, "audit", "run", *args, "--retry-truncated", "--max-tokens", "16384", expect=2)
        assert "pass --max-tokens above 16384" in small.stderr
        retried = hindsight(db, "audit", "run", *args, "--retry-truncated", "--max-tokens", "20000").stdout
        assert "1 calls selected, 1 answered now" in retried and server.requests[-1]["max_tokens"] == 20000
    hindsight(db, "build", "--select", "+agg_hb_parser_versions")
    assert query(db, "select truncated_replies, cells from agg_hb_parser_versions where parser_version = 'v2'") == [(0, 8)]
    assert "recorded" in hindsight(db, "audit", "inspect", "--model", "openai:gpt-4.1-mini", "--accept").stdout


def test_anthropic_direct_and_openai_batch_collection(db):
    with FakeLLMServer() as server:
        direct = hindsight(db, "audit", "run", "--model", "anthropic:claude-haiku-4-5", "--base-url", server.url,
                           "--tier", "smoke").stdout
        assert "8 answered now" in direct and "temperature 0.2 not sent: claude-haiku-4-5 takes no temperature" in direct
        body = server.requests[0]
        assert isinstance(body["system"], str) and [m["role"] for m in body["messages"]] == ["user"]
        assert "temperature" not in body and body["max_tokens"] == 16384       # API 2026-10-21 refuses any temperature
        sampling = scalar(db, "select sampling from raw.hb_registry where model_key = 'claude-haiku-4-5'")
        assert sampling.startswith("arm: max_tokens 16384 [temperature 0.2 not sent")

        batch = ["--model", "openai:gpt-4.1-mini", "--base-url", server.url + "/v1", "--tier", "smoke", "--batch"]
        assert "8 calls submitted now" in hindsight(db, "audit", "run", *batch).output
        lines = [json.loads(line) for f in server.batches.files.values() for line in f["content"].decode().splitlines()]
        assert len(lines) == 8 and {line["body"]["temperature"] for line in lines} == {0.2}
        collected = hindsight(db, "audit", "run", *batch, "--wait", "--poll-interval", "0.2").output
        assert "0 calls submitted now" in collected
    assert query(db, """select model_key, count(*) from raw.hb_responses group by model_key order by model_key""") == \
        [("claude-haiku-4-5", 8), ("gpt-4.1-mini", 8)]
    assert scalar(db, "select count(*) from raw.llm_calls where batch_key is not null and purpose = 'hb_arm'") == 8


def test_reprobes_asked_in_a_batch_and_collected_by_another_process_keep_their_set(db):
    """`--tier lap-sensitivity --batch`, then `hindsight batches collect` in another process: each reply
    is stored with its call position, probe set and temperature (read back from the batch's own rows)."""
    with FakeLLMServer() as server:
        model, url = ["--model", "openai:gpt-4.1-mini"], ["--base-url", server.url + "/v1"]
        hindsight(db, "audit", "run", *model, *url, "--tier", "smoke")
        hindsight(db, "audit", "inspect", *model, "--accept")
        plan = hindsight(db, "audit", "plan", *model, "--tier", "lap-sensitivity").stdout
        assert "T 0.3 s0-19" in plan and "T 0.7 s0-19" in plan and "T 1.0 s20-39" in plan and "15,480 calls" in plan
        submitted = hindsight(db, "audit", "run", *model, *url, "--tier", "lap-sensitivity", "--batch", "--limit", "6").output
        assert "6 calls submitted now" in submitted
        lines = [json.loads(line) for f in server.batches.files.values() for line in f["content"].decode().splitlines()]
        sent = sorted(line["body"]["temperature"] for line in lines)
        assert set(sent) <= {0.3, 0.7, 1.0} and len(set(sent)) > 1
        hindsight(db, "batches", "collect", "--wait", "--poll-interval", "0.2")
    assert query(db, """select kind, probe_set, count(*) from raw.hb_responses where model_key = 'gpt-4.1-mini'
                          group by all order by all""") == [("arm", "protocol", 8), ("lap", "lap_sensitivity", 6)]
    stored = [t for (t,) in query(db, "select temperature from raw.hb_responses where kind = 'lap' order by temperature")]
    assert stored == sent


def test_collected_replies_and_the_same_replies_as_a_release_give_the_same_row(db, tmp_path):
    """One path for both sources: a simulated auditee asked through the runner, and its replies
    written out in the release layout (arm cells' 04_raw_response.txt only, probe lines as the
    release's runners parse them) and loaded under another key, score to the same row."""
    spec = ["--model", "sim:audit-trigger"]
    hindsight(db, "audit", "run", *spec, "--tier", "smoke")
    hindsight(db, "audit", "inspect", *spec, "--accept")
    hindsight(db, "audit", "run", *spec, "--tier", "full", "--concurrency", "32")
    hindsight(db, "audit", "run", *spec, "--tier", "lap-sensitivity", "--concurrency", "32")
    release = tmp_path / "release"
    write_panel(release)
    bench = release / "hindsight" / "outputs" / "bench" / "released-trigger"
    replies = query(db, """select kind, arm, replicate, decision_date, sample, reply_text, finish_reason, probe_set, temperature
                           from raw.hb_responses where model_key = 'audit-trigger' order by decision_date, sample""")
    rec, lap, reprobes = [], [], {}
    for kind, arm, replicate, date, sample, text, finish, probe_set, temperature in replies:
        if finish == "length":
            continue                  # the release's runners wrote nothing for a cut-off reply
        if probe_set == "lap_sensitivity":
            # the release's review/lap_sensitivity_runs/<model>/ files, one per re-probe set
            reprobes.setdefault(temperature, []).append({"decision_date": date, "rep": sample, "answer": parse_lap(text),
                                                         "raw": text[-60:], "temp": temperature})
        elif kind == "arm":
            cell = bench / arm / f"rep{replicate}" / date
            cell.mkdir(parents=True)
            (cell / "04_raw_response.txt").write_text(text)
        elif kind == "rec":
            rec.append({"decision_date": date, "estimated_date": parse_rec(text), "raw": text[-200:]})
        else:
            lap.append({"decision_date": date, "rep": sample, "answer": parse_lap(text), "raw": text[-60:]})
    (bench / "date_probe_results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rec))
    (bench / "lap_probe_results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lap))
    runs = release / "hindsight" / "outputs" / "review" / "lap_sensitivity_runs" / "released-trigger"
    runs.mkdir(parents=True)
    for temperature, lines in reprobes.items():
        (runs / f"lap_t{temperature}_probe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    hindsight(db, "load", "hindsightbench", release)
    hindsight(db, "build")
    collected, released = row(db, "audit-trigger"), row(db, "released-trigger")
    assert collected["cells"] < 2064 and collected["e2_est"] > 0.2          # cut-off cells left out; the planted trigger
    for column in set(collected) - REGISTRY:
        assert released[column] == (pytest.approx(collected[column]) if isinstance(collected[column], float) else collected[column]), column
    # and the same robustness rows (the rep jackknife's draws are seeded by the key, so they are left out)
    for mart, order in (("agg_hb_window_perturbation", "perturbation, endpoint"), ("agg_hb_transcript_audit", "arm"),
                        ("agg_hb_w_offset_split", "family, baseline"), ("agg_hb_perdate_crosstab", "decision_date"),
                        ("agg_hb_lap_sensitivity", "temperature, samples, theta")):
        columns = [c for (c,) in query(db, f"select column_name from information_schema.columns where table_name = '{mart}'")
                   if c not in ("model_key", "row_version") and not c.startswith("jk_")]
        sql = f"select {', '.join(columns)} from {mart} where model_key = ? order by {order}"
        mine, theirs = query(db, sql, ["audit-trigger"]), query(db, sql, ["released-trigger"])
        # floats to 1e-12: a mean over dates is summed in whatever order the engine's threads take
        assert mine and theirs == [tuple(pytest.approx(v, abs=1e-12) if isinstance(v, float) else v for v in r) for r in mine], mart
    assert len(query(db, "select distinct temperature, samples from agg_hb_lap_sensitivity where model_key = 'released-trigger'")) == 4


def test_the_panel_loads_once_and_a_changed_panel_file_loads_again(panel_warehouse, tmp_path):
    copy = tmp_path / "w.duckdb"
    shutil.copy(panel_warehouse, copy)
    before = query(copy, "select count(*) from raw.hb_panel_requests union all select count(*) from raw.hb_postcutoff_snapshots")
    assert [n for (n,) in before] == [240, 18 * 8]
    panel = write_panel(tmp_path / "panel")
    hindsight(copy, "load", "hindsightbench", panel)
    assert query(copy, "select count(*) from raw.hb_panel_requests union all select count(*) from raw.hb_postcutoff_snapshots") == before
    snapshots = panel / "hindsight" / "outputs" / "fm1c" / "postcutoff_snapshots.json"
    snapshots.write_text(snapshots.read_text().replace('"vintage_value": "1', '"vintage_value": "9', 1))
    hindsight(copy, "load", "hindsightbench", panel)
    assert scalar(copy, "select count(distinct load_id) from raw.hb_postcutoff_snapshots") == 2
    assert scalar(copy, "select count(*) from raw.hb_panel_requests") == 240          # unchanged file: not again
    broken = tmp_path / "broken"
    write_panel(broken)
    (broken / "hindsight" / "outputs" / "fm1c" / "postcutoff_snapshots.json").write_text('{"snapshots": {"2025-01-15": 3}}')
    failed = hindsight(copy, "load", "hindsightbench", broken, expect=2)
    assert "postcutoff_snapshots.json" in failed.stderr and "not a post-cutoff snapshot file" in failed.stderr


def test_the_demo_audits_its_simulated_models_through_the_runner(demo_warehouse):
    """`make demo` runs the whole collection path: every planted cutoff is found, the planted trigger
    is significant, the guessing model is at chance, and the control arm's E3' is in the row."""
    db, output, _ = demo_warehouse
    assert "HindsightBench audit rows of the simulated auditees" in output
    rows = {key: row(db, key) for key in ("audit-trigger", "audit-recall-only", "audit-late", "audit-guessing")}
    assert {key: r["empirical_cutoff"] for key, r in rows.items() if key != "audit-guessing"} == \
        {"audit-trigger": "2024-06", "audit-recall-only": "2023-04", "audit-late": "2025-09"}
    assert rows["audit-guessing"]["lap_at_chance"] and not rows["audit-trigger"]["lap_at_chance"]
    assert rows["audit-trigger"]["e2_lo"] > 0 and rows["audit-recall-only"]["e2_lo"] < 0 < rows["audit-recall-only"]["e2_hi"]
    assert rows["audit-trigger"]["e3_control_est"] is not None and rows["audit-late"]["e3_control_est"] is None
    assert {key: r["tier"] for key, r in rows.items()} == {"audit-trigger": "full", "audit-recall-only": "full-1rep",
                                                           "audit-late": "full", "audit-guessing": "reduced"}
    # + audit-fragile (full-1rep), audit-trigger-bf16 (full) and audit-trigger's LAP re-probes (lap-sensitivity)
    assert scalar(db, "select count(*) from raw.llm_calls where purpose like 'hb_%'") == \
        7962 + 6450 + 7482 + 3098 + 6450 + 7482 + 15480
    assert scalar(db, "select count(*) from raw.hb_inspections") == 6
