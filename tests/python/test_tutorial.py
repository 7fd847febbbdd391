"""The tutorial (docs/tutorial.md) runs as written: its shell blocks, in order, in a fresh folder,
end in a metrics table with intervals over the five cases it loads."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import PROJECT

pytestmark = pytest.mark.slow


def tutorial_script() -> str:
    blocks = re.findall(r"```sh\n(.*?)```", (PROJECT / "docs" / "tutorial.md").read_text(), flags=re.S)
    assert len(blocks) >= 5
    return "set -euo pipefail\n" + "\n".join(blocks)


def test_the_tutorial_runs_as_written_to_metrics_with_intervals(tmp_path):
    # the tutorial runs in the project root: the demo corpus it copies from, at the same relative path
    (tmp_path / "ingest" / "demo").mkdir(parents=True)
    (tmp_path / "ingest" / "demo" / "corpus").symlink_to(PROJECT / "ingest" / "demo" / "corpus")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "DBT_TARGET_PATH": str(tmp_path / "dbt-target"), "DBT_LOG_PATH": str(tmp_path / "dbt-logs")}
    env.pop("HINDSIGHT_DB", None)
    done = subprocess.run(["bash", "-c", tutorial_script()], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # the last block's query printed the paired metrics; the warehouse holds them for the five cases
    assert "delta_htr" in done.stdout and "delta_acc" in done.stdout
    with duckdb.connect(str(tmp_path / "mine" / "warehouse.duckdb"), read_only=True) as con:
        cases = con.execute("select count(distinct case_id) from main.dim_questions where cohort = 'mine'").fetchone()[0]
        paired = con.execute("""select count(*), min(n_cases), max(n_cases) from main.agg_metrics
                                where cohort = 'mine' and metric = 'delta_htr' and ci_low <= estimate
                                  and estimate <= ci_high""").fetchone()
    assert cases == 5
    assert paired[0] > 0 and paired[2] == 5, paired
