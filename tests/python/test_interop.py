"""Issue 35: the demo's requests collected through Inspect AI and loaded back, and the results as
Every Eval Ever records that its own validator accepts.

Inspect runs in process with its mock model (`mockllm/model`) answering through a scripted function
whose outputs carry token usage: nothing else is started and nothing leaves the machine. EEE's
validator runs from a Python 3.12 environment the `eee_validate` fixture makes (.venv-eee)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from conftest import hindsight, new_warehouse, query, require_inspect, scalar, write_jsonl

MODEL = "scripted:inspect"
CONDITIONS = "0,1.1,2.2"


def scripted(cut_off: set[str] = frozenset(), fail: set[str] = frozenset()):
    """Inspect's mock model answering from the question it is shown (the same answer for the same
    prompt, whatever order Inspect asks in), with usage; questions in CUT_OFF stop on the token
    limit, those in FAIL raise."""
    from inspect_ai.model import ModelOutput, ModelUsage

    def answer(messages, tools, tool_choice, config):
        user = [m for m in messages if m.role == "user"][-1].text
        question = json.loads(user.rsplit("Question:\n", 1)[1])
        if question["question"] in fail:
            raise RuntimeError("scripted failure")
        pick = int(hashlib.sha256(user.encode()).hexdigest(), 16)
        if question["format"] == "true/false":
            text = ["true", "false"][pick % 2]
        elif question["format"] == "multiple choice":
            text = question["options"][pick % len(question["options"])]
        else:
            text = "The findings were too early to call."
        reply = json.dumps({"answer": text, "evidence": "scripted"})
        output = ModelOutput.from_content(model="scripted-1", content=reply[:20] if question["question"] in cut_off else reply,
                                          stop_reason="max_tokens" if question["question"] in cut_off else "stop")
        output.usage = ModelUsage(input_tokens=len(user) // 4, output_tokens=20, total_tokens=len(user) // 4 + 20)
        return output
    return answer


def run_inspect(task_dir: Path, logs: Path, model_fn, task_file: str = "hindsight_task.py", **options) -> Path:
    """`inspect eval TASK_FILE` from TASK_DIR (Inspect resolves task files relative to the working folder)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    here = os.getcwd()
    os.chdir(task_dir)
    try:
        done = inspect_eval(task_file, model=get_model("mockllm/model", custom_outputs=model_fn), log_dir=str(logs),
                            display="none", **options)
    finally:
        os.chdir(here)
    return Path(done[0].location)


def as_jsonl(log: Path, out: Path) -> Path:
    """The same answers as `hindsight load responses` lines: what a user without Inspect would load."""
    from inspect_ai.log import read_eval_log

    rows = []
    for sample in read_eval_log(str(log)).samples:
        reply = json.loads(sample.output.completion)
        rows.append({**{k: sample.metadata[k] for k in ("question_id", "condition", "visibility", "prompt_variant")},
                     "model": MODEL, "answer": reply["answer"], "evidence": reply["evidence"], "sample_index": sample.epoch - 1})
    return write_jsonl(out, rows)


METRIC_COLUMNS = "cohort, condition, visibility, prompt_variant, metric, estimate, ci_low, ci_high, n_questions, n_cases, n_valid"


def test_the_demo_requests_round_trip_through_inspect_equal_to_the_same_answers_as_jsonl(demo_warehouse, tmp_path):
    require_inspect()
    through_inspect, as_lines = new_warehouse(tmp_path / "inspect"), new_warehouse(tmp_path / "jsonl")
    shutil.copy(demo_warehouse[0], through_inspect)
    shutil.copy(demo_warehouse[0], as_lines)
    exported = hindsight(through_inspect, "export", "inspect", "--out", tmp_path / "task", "--conditions", CONDITIONS,
                         "--variant", "standard")
    assert "task hindsight_answers:" in exported.stdout
    dataset = [json.loads(line) for line in (tmp_path / "task" / "hindsight_answers.jsonl").read_text().splitlines()]
    requests = query(through_inspect, """select request_id from fct_answer_requests
                                         where condition in ('0', '1.1', '2.2') and prompt_variant = 'standard'""")
    assert sorted(s["id"] for s in dataset) == sorted(r[0] for r in requests)
    assert {"request_id", "question_id", "case_id", "condition", "visibility", "prompt_variant"} <= set(dataset[0]["metadata"])

    log = run_inspect(tmp_path / "task", tmp_path / "logs", scripted())
    loaded = hindsight(through_inspect, "load", "inspect", log, "--model", MODEL)
    assert f"{len(dataset)} answers (0 truncated)" in loaded.stdout and "0 rejected" in loaded.stdout
    again = hindsight(through_inspect, "load", "inspect", tmp_path / "logs", "--model", MODEL)
    assert "already loaded" in again.stdout
    assert scalar(through_inspect, "select count(*) from raw.responses where model = ?", [MODEL]) == len(dataset)
    # Inspect's usage, stop reason and reported model are in the ledger, one call per sample
    assert query(through_inspect, """select count(*), count(distinct call_id), min(input_tokens) > 0, min(output_tokens),
                                            any_value(finish_reason), any_value(reported_model), any_value(provider)
                                     from raw.llm_calls where model = ?""", [MODEL]) == [
        (len(dataset), len(dataset), True, 20, "stop", "scripted-1", "inspect")]
    hindsight(as_lines, "load", "responses", as_jsonl(log, tmp_path / "answers.jsonl"))

    fast = ["--exclude", "resource_type:test", "resource_type:unit_test"]
    hindsight(through_inspect, "build", *fast)
    hindsight(as_lines, "build", *fast)
    sql = f"select {METRIC_COLUMNS} from agg_metrics where model = ? order by all"
    metrics = query(through_inspect, sql, [MODEL])
    assert {row[1] for row in metrics} == {"0", "1.1", "2.2"} and len(metrics) > 30
    assert metrics == query(as_lines, sql, [MODEL])


def test_samples_not_asked_as_the_benchmark_asks_are_rejected_and_the_rest_of_the_log_loads(demo_warehouse, tmp_path):
    require_inspect()
    db = new_warehouse(tmp_path)
    shutil.copy(demo_warehouse[0], db)
    hindsight(db, "export", "inspect", "--out", tmp_path / "task", "--conditions", "2.1", "--variant", "warning")
    task = tmp_path / "task"
    first = [json.loads(line) for line in (task / "hindsight_answers.jsonl").read_text().splitlines()[:12]]
    questions = sorted({json.loads(s["input"][1]["content"].rsplit("Question:\n", 1)[1])["question"] for s in first})
    cut_off, fail = {questions[0]}, {questions[1]}
    # the task as exported, two epochs: a token-limited answer is truncated, an error is kept as a failed call
    log = run_inspect(task, tmp_path / "logs", scripted(cut_off, fail), epochs=2, limit=12, fail_on_error=False)
    loaded = hindsight(db, "load", "inspect", log, "--model", MODEL)
    truncated = scalar(db, """select count(*) from raw.responses where model = ?
                              and payload ->> 'response_parse_status' = 'truncated'""", [MODEL])
    failed = scalar(db, "select count(*) from raw.llm_calls where model = ? and status = 'error'", [MODEL])
    assert truncated >= 2 and failed >= 2, loaded.stdout
    assert query(db, "select distinct cast(payload ->> 'sample_index' as integer) from raw.responses where model = ? order by 1",
                 [MODEL]) == [(0,), (1,)]

    # a solver that adds a system prompt, and a sample whose metadata names another condition
    source = (task / "hindsight_task.py").read_text()
    (task / "edited_task.py").write_text(source.replace(
        "from inspect_ai.solver import generate", "from inspect_ai.solver import generate, system_message").replace(
        "solver=generate(),", "solver=[system_message('Think step by step.'), generate()],"))
    lines = (task / "hindsight_answers.jsonl").read_text().splitlines()
    moved = json.loads(lines[0])
    moved["metadata"]["condition"] = "2.2"
    (task / "hindsight_answers.jsonl").write_text("\n".join([json.dumps(moved), *lines[1:]]) + "\n")
    edited = run_inspect(task, tmp_path / "edited", scripted(), task_file="edited_task.py", limit=4)
    refused = hindsight(db, "load", "inspect", edited, "--model", "scripted:edited", expect=1)
    assert "metadata.condition" in refused.stderr and "'2.2' is not the request's '2.1'" in refused.stderr
    assert refused.stderr.count("messages: a system message was added as message 2") == 3
    assert scalar(db, "select count(*) from raw.responses where model = 'scripted:edited'") == 0
    assert scalar(db, "select count(*) from raw.rejected_rows where kind = 'inspect'") == 4
    bad = tmp_path / "not-a-log.eval"
    bad.write_text("{}")
    broken = hindsight(db, "load", "inspect", bad, expect=1)
    assert "not a readable Inspect log" in broken.stderr and str(bad) in broken.stderr


def test_an_inspect_scorer_loads_as_judgments_of_another_pipeline(demo_warehouse, tmp_path):
    require_inspect()
    db = new_warehouse(tmp_path)
    shutil.copy(demo_warehouse[0], db)
    hindsight(db, "export", "inspect", "--out", tmp_path / "task", "--conditions", "1.2", "--variant", "standard")
    task = tmp_path / "task"
    source = (task / "hindsight_task.py").read_text()
    (task / "scored_task.py").write_text(source.replace(
        "from inspect_ai.solver import generate", "from inspect_ai.scorer import includes\nfrom inspect_ai.solver import generate").replace(
        "solver=generate(),", "solver=generate(),\n        scorer=includes(),"))
    log = run_inspect(task, tmp_path / "logs", scripted(), task_file="scored_task.py", limit=6)
    loaded = hindsight(db, "load", "inspect", log, "--model", MODEL, "--judge", "inspect:includes")
    assert "6 answers" in loaded.stdout and "6 judgments" in loaded.stdout
    assert query(db, """select count(*), min(judge_model), min(accuracy_score) >= 0, max(accuracy_score) <= 1
                        from raw.loaded_judgments where model = ?""", [MODEL]) == [(6, "inspect:includes", True, True)]


def _results(folder: Path) -> dict[str, dict]:
    return {str(p.relative_to(folder)): json.loads(p.read_text()) for p in sorted((folder / "data").rglob("*.json"))}


def test_every_eee_record_validates_and_equals_the_marts_cell_for_cell(demo_warehouse, eee_validate, tmp_path):
    db = demo_warehouse[0]
    done = hindsight(db, "export", "eee", "--out", tmp_path / "eee")
    hindsight(db, "export", "eee", "--out", tmp_path / "again")
    files = sorted(p.relative_to(tmp_path / "eee").as_posix() for p in (tmp_path / "eee").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "again").as_posix() for p in (tmp_path / "again").rglob("*") if p.is_file())
    assert all((tmp_path / "eee" / f).read_bytes() == (tmp_path / "again" / f).read_bytes() for f in files)  # stable ids
    models = [m for (m,) in query(db, "select distinct model from agg_metrics order by 1")]
    audited = query(db, "select model_key from agg_hb_audit_rows order by 1")
    assert len([f for f in files if f.endswith(".json")]) == len(models) + len(audited) and f"{len(files)} files" in done.stdout

    checked = eee_validate(tmp_path / "eee", *files)
    report = json.loads(checked.stdout)
    assert checked.returncode == 0 and len(report) == len(files), checked.stdout[-3000:] + checked.stderr[-2000:]
    assert all(r["valid"] and not r["warnings"] for r in report)

    records = _results(tmp_path / "eee")
    clinical = {r["model_info"]["name"]: r for r in records.values() if r["evaluation_id"].startswith("clinical")}
    assert sorted(clinical) == models
    for model, record in clinical.items():
        marts = {f"{c}/{k}/{v}/{p}/{m}": (e, lo, hi, nq, nc) for c, k, v, p, m, e, lo, hi, nq, nc in query(
            db, """select cohort, condition, visibility, prompt_variant, metric, estimate, ci_low, ci_high, n_questions, n_cases
                   from agg_metrics where model = ? and estimate is not null""", [model])}
        exported = {}
        for result in record["evaluation_results"]:
            details = result["score_details"]
            interval = details["uncertainty"].get("confidence_interval", {})
            exported[result["evaluation_result_id"]] = (details["score"], interval.get("lower"), interval.get("upper"),
                                                        details["uncertainty"]["num_samples"], int(details["details"]["n_cases"]))
        assert exported == marts, model
        lines = (tmp_path / "eee" / record["detailed_evaluation_results"]["file_path"]).read_text().splitlines()
        assert len(lines) == scalar(db, """select count(acc) + count(htr) from fct_answers
                                           where model = ? and is_latest_in_cell""", [model])
        first = json.loads(lines[0])
        assert {"condition", "visibility", "prompt_variant", "sample_index", "hindsight_trap"} <= set(first["metadata"])
        assert first["evaluation_result_id"] in exported
    audit = {r["model_info"]["name"].split(":", 1)[1]: r for r in records.values() if r["evaluation_id"].startswith("hindsightbench")}
    columns = ["e1_est", "e1_lo", "e1_hi", "e2_est", "e3_est", "delta", "recall_hit_rate", "lap_pre", "lap_post"]
    for key, *values in query(db, f"select model_key, {', '.join(columns)} from agg_hb_audit_rows"):
        results = {r["evaluation_result_id"]: r["score_details"] for r in audit[key]["evaluation_results"]}
        row = dict(zip(columns, values))
        assert results["e1_est"]["uncertainty"]["confidence_interval"]["lower"] == row["e1_lo"]
        assert results["e1_est"]["uncertainty"]["confidence_interval"]["upper"] == row["e1_hi"]
        assert {c: results[c]["score"] for c in columns if c in results} == {
            c: v for c, v in row.items() if c in results}, key
        assert {c for c, v in row.items() if v is not None and not c.endswith(("_lo", "_hi"))} <= set(results)


def test_the_validator_refuses_a_record_the_exporter_did_not_write(demo_warehouse, eee_validate, tmp_path):
    """The check can fail: a score outside its bounds and a samples file that lost its aggregate's id."""
    hindsight(demo_warehouse[0], "export", "eee", "--out", tmp_path, "--model", "sim:prospective")
    record_path = next((tmp_path / "data").rglob("*.json"))
    record = json.loads(record_path.read_text())
    record["evaluation_results"][0]["score_details"]["score"] = 2.0
    record_path.write_text(json.dumps(record))
    samples = record_path.with_name(record_path.stem + "_samples.jsonl")
    line = json.loads(samples.read_text().splitlines()[0])
    samples.write_text(json.dumps({**line, "evaluation_id": "another"}) + "\n")
    paths = [p.relative_to(tmp_path).as_posix() for p in (record_path, samples)]
    checked = eee_validate(tmp_path, *paths)
    report = json.loads(checked.stdout)
    assert checked.returncode != 0
    text = json.dumps(report)
    assert "outside" in text and "evaluation_id" in text
