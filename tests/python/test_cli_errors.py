"""Every command's expected failures end in one line with the fix and a non-zero exit code, never a
Python traceback: bad paths, bad files, unbuilt marts, unknown models, wrong flags, ordinary SQL
mistakes. Each command runs in process on a fresh (unbuilt) warehouse with bad input."""
from __future__ import annotations

import traceback

import pytest
from click.testing import CliRunner

from conftest import cli_env, hindsight, new_warehouse, write_jsonl
from ingest.cli import main
from ingest.db import connect

MISSING = "no/such/path"

CASES = {
    "load cases, missing folder": ["load", "cases", "--cohort", "x", "--narratives", MISSING],
    "load cases, bad --tts": ["load", "cases", "--cohort", "x", "--tts", "H"],
    "load questions, missing file": ["load", "questions", MISSING + ".jsonl"],
    "load questions, not JSON lines": ["load", "questions", "{garbage}"],
    "load responses, missing file": ["load", "responses", MISSING + ".jsonl"],
    "load judgments, missing file": ["load", "judgments", MISSING + ".jsonl"],
    "load judgments, bad lines": ["load", "judgments", "{judgments}"],
    "load hindsightbench, missing root": ["load", "hindsightbench", MISSING],
    "answer, marts not built": ["answer", "--model", "sim:prospective"],
    "answer, unknown provider": ["answer", "--model", "nosuch:model"],
    "answer, --wait without --batch": ["answer", "--model", "sim:prospective", "--wait"],
    "judge, marts not built": ["judge", "--model", "sim:prospective"],
    "generate narratives, marts not built": ["generate", "narratives", "--model", "sim:prospective"],
    "generate questions, marts not built": ["generate", "questions", "--model", "sim:prospective"],
    "leaderboard, marts not built": ["leaderboard", "--out", "{tmp}/board"],
    "query, no warehouse file": ["query", "select 1", "--db-missing"],
    "query, table not built": ["query", "select * from agg_metrics"],
    "query, not a read": ["query", "drop table raw.loads"],
    "export, marts not built": ["export", "--out", "{tmp}/export"],
    "export raw, no warehouse file": ["export", "raw", "--out", "{tmp}/landing", "--db-missing"],
    "audit compare, marts not built": ["audit", "compare", "--model-a", "a", "--model-b", "b"],
    "audit run, unknown tier": ["audit", "run", "--model", "sim:audit-trigger", "--tier", "huge"],
    "report, marts not built": ["report", "--out", "{tmp}/report"],
    "explore, marts not built": ["explore", "--port", "0"],
    "explore --static, marts not built": ["explore", "--static", "{tmp}/slice"],
    "metrics --compare, not two values": ["metrics", "--metric", "acc", "--compare", "model=a"],
    "validation sample, marts not built": ["validation", "sample", "--model", "sim:prospective"],
    "validation export, no design": ["validation", "export", "--out", "{tmp}/packets"],
    "validation load, missing file": ["validation", "load", MISSING + ".csv"],
    "audit plan, marts not built": ["audit", "plan", "--model", "sim:audit-trigger", "--tier", "smoke"],
    "audit inspect, marts not built": ["audit", "inspect", "--model", "sim:audit-trigger"],
    "batches cancel, unknown batch": ["batches", "cancel", "batch_nope"],
    "build, a flag dbt does not take": ["build", "--nosuchflag"],
    "unknown command": ["nosuchcommand"],
    "unknown option": ["status", "--nosuchoption"],
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_input_ends_in_one_line_not_a_traceback(tmp_path, name):
    db = new_warehouse(tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in CASES[name]]
    if "{garbage}" in args:
        args[args.index("{garbage}")] = str(write_jsonl(tmp_path / "q.jsonl", ["{not json", "[1, 2]"]))
    if "{judgments}" in args:
        args[args.index("{judgments}")] = str(write_jsonl(tmp_path / "j.jsonl", [
            {"kind": "individual", "question_id": "q1", "model": "m", "condition": "9", "visibility": "full", "judge": "p"},
            {"kind": "sideways", "question_id": "q1", "model": "m", "condition": "0", "judge": "p"}]))
    env = cli_env(db)
    if "--db-missing" in args:
        args.remove("--db-missing")
        env["HINDSIGHT_DB"] = str(tmp_path / "never" / "made.duckdb")
    else:
        with connect(db):       # a warehouse with its raw tables and nothing built, as after a first load
            pass
    if args[0] == "build":      # dbt runs in a child process: its streams are the process's own
        done = hindsight(db, *args, expect=None)
        code, output, shown = done.returncode, done.output, done.output
    else:
        result = CliRunner().invoke(main, args, env=env, catch_exceptions=True)
        code, output = result.exit_code, result.output
        shown = output + ("".join(traceback.format_exception(result.exception))
                          if result.exception and not isinstance(result.exception, SystemExit) else "")
    assert "Traceback" not in shown, shown
    assert code != 0, output
    assert any(marker in output for marker in ("error:", "Error:", "Fix:")), output
