"""The dbt child of `hindsight build`: it parses the project while the CLI plans, then builds on it."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PROJECT, cli_env, hindsight, new_warehouse
from ingest.dbt_process import DbtProcess, parse_flags

# what dbt logs when a command parses the project itself (a build handed a manifest logs none of these)
PARSED = re.compile(r"Partial parsing enabled|Unable to do partial parsing|partial parse|Nothing changed, skipping partial")


def parsed_per_invocation(db: Path) -> list[bool]:
    """Per dbt invocation logged for warehouse DB, whether it parsed the project."""
    log = (db.parent / f"{db.stem}.dbt-logs" / "dbt.log").read_text()
    return [bool(PARSED.search(part)) for part in re.split(r"={30} [\d:.]+ \| [0-9a-f-]+ ={30}", log)[1:]]


def test_the_flags_that_change_what_dbt_parses_are_kept_with_their_values():
    args = ["--exclude", "x", "--vars", "{a: 1}", "--target=dev", "--threads", "1", "-t", "ci", "--full-refresh", "--profile"]
    assert parse_flags(args) == ["--vars", "{a: 1}", "--target", "dev", "-t", "ci", "--profile"]
    assert parse_flags(["build", "--select", "dim_build"]) == []


@pytest.mark.slow
def test_the_build_runs_on_the_project_parsed_ahead_and_parses_again_for_other_flags(tmp_path):
    db = new_warehouse(tmp_path)
    hindsight(db, "build", "--select", "dim_build")
    hindsight(db, "build", "--select", "dim_build", "--vars", "{bootstrap_replicates: 200}")
    # the child's parse logs nothing; the builds, handed its manifest, parse nothing
    assert parsed_per_invocation(db) == [False, False]
    # a child asked to build under other vars than it parsed with does not reuse its manifest
    child = subprocess.run([sys.executable, "-m", "ingest.dbt_process", "[]"], cwd=PROJECT, env=cli_env(db),
                           input=json.dumps(["build", "--select", "dim_build", "--vars", "{bootstrap_replicates: 300}"]) + "\n",
                           capture_output=True, text=True)
    assert child.returncode == 0, child.stdout[-3000:]
    assert parsed_per_invocation(db) == [False, False, True]


def test_flags_dbt_cannot_parse_fail_the_build_and_are_reported_once(tmp_path):
    done = hindsight(tmp_path / "w.duckdb", "build", "--all", "--vars", "{unclosed", expect=1)
    assert done.output.count("The YAML provided in the --vars argument is not valid") == 1


def test_a_child_that_will_not_build_is_stopped(tmp_path):
    db = new_warehouse(tmp_path)
    with DbtProcess(db, []) as dbt:
        dbt.cancel()
    assert dbt._child.returncode is not None
    with pytest.raises(RuntimeError):
        with DbtProcess(db, []) as dbt:         # an error before the build stops the child too
            raise RuntimeError("planning failed")
    assert dbt._child.returncode is not None


def logged(logs: Path, run) -> str:
    """What dbt logged into LOGS while RUN ran (the build's child parses in one invocation, builds in another)."""
    log = logs / "dbt.log"
    before = log.stat().st_size if log.exists() else 0
    run()
    with log.open("rb") as handle:
        handle.seek(before)
        return handle.read().decode()


@pytest.mark.slow
def test_a_plain_dbt_build_after_hindsight_build_parses_nothing_again(tmp_path):
    """`hindsight build` and a plain `dbt build` in the same shell render the same profile, so dbt's
    partial parse survives the switch both ways (it used to log "Unable to do partial parsing because
    profile has changed" and parse the whole project again: 5 to 32 s each time)."""
    db = new_warehouse(tmp_path)
    logs = tmp_path / "logs"
    env = {"DBT_TARGET_PATH": str(tmp_path / "target"), "DBT_LOG_PATH": str(logs)}
    dbt = [str(Path(sys.executable).parent / "dbt"), "build", "--select", "dim_build", "--project-dir", str(PROJECT),
           "--profiles-dir", str(PROJECT)]

    def plain():
        done = subprocess.run(dbt, cwd=PROJECT, env=cli_env(db, env), capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:]

    # the build's child parses silently: that it wrote the same parse state shows in the plain dbt after it
    for step in range(2):
        hindsight(db, "build", "--select", "dim_build", env=env)
        log = logged(logs, plain)
        assert "Running with dbt" in log and "Unable to do partial parsing" not in log and "Starting full parse" not in log, (
            step, log[:3000])


def test_a_changed_engine_twin_drops_the_partial_parse_that_would_lose_its_enabled_model(tmp_path):
    """dbt 1.11's partial parse, given a changed disabled twin (models/**/spark/int_hb_reply_parses.sql
    beside the DuckDB Python model of that name), drops the enabled model too; the guard of the dbt
    child and of ingest/spark/dbt_on_spark.py deletes the parse state first. On a copy of the project."""
    from ingest.dbt_process import forget_partial_parse_of_changed_twins, twin_models

    project = tmp_path / "project"
    project.mkdir()
    for part in ["dbt_project.yml", "profiles.yml", "models", "macros", "seeds", "tests/dbt", "analyses"]:
        source, copy = PROJECT / part, project / part
        shutil.copytree(source, copy) if source.is_dir() else shutil.copy(source, copy)
    target, models = project / "target", project / "models"
    env = {**cli_env(new_warehouse(tmp_path)), "DBT_TARGET_PATH": str(target)}
    dbt = [str(Path(sys.executable).parent / "dbt"), "ls", "--select", "int_hb_cells+1", "--project-dir", str(project),
           "--profiles-dir", str(project), "--resource-type", "model"]

    def listed() -> subprocess.CompletedProcess:
        return subprocess.run(dbt, capture_output=True, text=True, env=env, cwd=project)

    assert models / "intermediate/hindsightbench/spark/int_hb_reply_parses.sql" in twin_models(models)
    assert not forget_partial_parse_of_changed_twins(target, models)        # no parse state yet
    assert listed().returncode == 0 and (target / "partial_parse.msgpack").exists()
    assert not forget_partial_parse_of_changed_twins(target, models)        # nothing changed: kept
    twin = models / "intermediate/hindsightbench/spark/int_hb_reply_parses.sql"
    twin.write_text(twin.read_text() + "-- an edit\n")
    assert forget_partial_parse_of_changed_twins(target, models)
    assert not (target / "partial_parse.msgpack").exists()
    done = listed()
    assert done.returncode == 0, done.stdout[-2000:]
    assert "hindsight.intermediate.hindsightbench.int_hb_cells" in done.stdout

    # without the guard, the same edit again leaves dbt without the enabled model
    twin.write_text(twin.read_text() + "-- another edit\n")
    broken = listed()
    assert broken.returncode != 0 and "which is not in the graph" in broken.stdout, broken.stdout[-2000:]
