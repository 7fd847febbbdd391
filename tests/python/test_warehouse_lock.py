"""A warehouse held by another process (a BI tool, a notebook, a second command): every command
waits HINDSIGHT_LOCK_WAIT seconds for it, then says who holds it and what to do, in one line."""
from __future__ import annotations

import subprocess
import time

import pytest

from conftest import hindsight, scalar


@pytest.mark.parametrize("command", [["build"], ["query", "select 1", "--live"], ["report", "--out", "r", "--live"],
                                     ["load", "responses", "missing.jsonl"]])
def test_a_held_warehouse_is_one_clear_line_naming_the_holder_and_the_fix(held, command):
    db, holder = held
    started = time.monotonic()
    done = hindsight(db, *command, expect=2, env={"HINDSIGHT_LOCK_WAIT": "0.5"})
    assert time.monotonic() - started < 30
    assert "Traceback" not in done.output and "IOException" not in done.output
    assert "in use by another process (" in done.stderr and f"PID {holder.pid}" in done.stderr
    assert "Fix: close that program" in done.stderr and "HINDSIGHT_LOCK_WAIT" in done.stderr


def test_status_never_waits_for_a_held_warehouse_and_names_its_holder(held):
    """`hindsight status` shows the runs (they never need the warehouse) and says who holds it."""
    db, holder = held
    started = time.monotonic()
    done = hindsight(db, "status")
    assert time.monotonic() - started < 8                      # 2 s of waiting, not the other commands' 10
    assert done.stdout.startswith("runs: none yet") and "the warehouse is busy (" in done.stdout
    assert f"PID {holder.pid}" in done.stdout and "Traceback" not in done.output


def test_a_command_waits_for_the_lock_and_then_runs(held):
    db, holder = held
    started = time.monotonic()
    releaser = subprocess.Popen(["sh", "-c", f"sleep 1.5; kill {holder.pid}"])
    done = hindsight(db, "status", env={"HINDSIGHT_LOCK_WAIT": "30"})
    releaser.wait()
    assert time.monotonic() - started >= 1.0 and "warehouse:" in done.stdout
    assert scalar(db, "select count(*) from raw.loads") == 0
