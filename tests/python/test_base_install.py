"""The base install, as a user gets it: `pip install .` (not editable, no extras) into a fresh
virtual environment, run from a folder that is not the checkout.

Every command's --help answers; `hindsight demo` builds a warehouse in the working directory from
the dbt project the package carries, and writes nothing into site-packages; a local-model run
against a port nobody listens on ends with a line about the connection; each command that needs an
extra ends with one line naming it. A module the package imports but no requirement declares fails
here (and in deptry, test_project_conventions.py), as CI's extras would otherwise hide it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import PROJECT

pytestmark = pytest.mark.slow


def _source_copy(folder: Path) -> Path:
    """The checkout's files (tracked, and new ones not ignored), without its .venv, target/ or builds."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=PROJECT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = PROJECT / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    return folder


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """(the base venv's bin folder, the environment to run it in)."""
    root = tmp_path_factory.mktemp("base-install")
    source = _source_copy(root / "source")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                          str(source)], capture_output=True, text=True)
    assert pip.returncode == 0, f"pip install . failed:\n{pip.stderr[-3000:]}"
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("HINDSIGHT_", "DBT_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return venv / "bin", env


def run(base, cwd: Path, *args, timeout: float = 600) -> subprocess.CompletedProcess:
    bin_dir, env = base
    return subprocess.run([str(bin_dir / "hindsight"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def site_packages(base) -> Path:
    return next((base[0].parent / "lib").glob("python3*/site-packages"))


def command_paths(base) -> list[list[str]]:
    """Every command and subcommand of the installed CLI, as argument lists."""
    script = ("import click, json\nfrom ingest.cli import main\n"
              "def walk(command, path):\n"
              "    yield path\n"
              "    if isinstance(command, click.Group):\n"
              "        for name, sub in command.commands.items():\n"
              "            yield from walk(sub, path + [name])\n"
              "print(json.dumps(list(walk(main, []))))")
    done = subprocess.run([str(base[0] / "python"), "-c", script], env=base[1], capture_output=True, text=True, cwd="/")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_package_carries_its_dbt_project(base):
    project = site_packages(base) / "ingest" / "dbt_project"
    for name in ["dbt_project.yml", "profiles.yml", "selectors.yml", "models/marts/metrics/agg_metrics.sql",
                 "models/staging/raw/_raw__sources.yml", "macros/publish_snapshot.sql", "seeds/metrics.csv",
                 "analyses/report_metrics.sql"]:
        assert (project / name).is_file(), f"the installed package lacks its dbt project's {name}"
    assert list((project / "tests" / "dbt").glob("*.sql")), "the installed package lacks the singular data tests"
    assert not (project / "setup.py").exists() and not (project / "target").exists()


def test_every_command_answers_help(base, tmp_path):
    paths = command_paths(base)
    assert len(paths) > 30 and ["bi", "requirements"] in paths and ["metrics"] in paths
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda path: (path, run(base, tmp_path, *path, "--help", timeout=120)), paths))
    failed = [f"hindsight {' '.join(path)} --help: {result.stderr.strip()[-500:]}" for path, result in done if result.returncode != 0]
    assert not failed, "\n".join(failed)


def test_demo_builds_in_the_working_directory_and_writes_nothing_into_the_package(base, tmp_path):
    installed = site_packages(base) / "ingest"
    before = sorted(str(p) for p in installed.rglob("*") if "__pycache__" not in p.parts)
    demo = run(base, tmp_path, "demo")
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert (tmp_path / "warehouse.duckdb").is_file() and (tmp_path / "warehouse.marts.duckdb").is_file()
    assert (tmp_path / "reports" / "index.html").is_file()
    # dbt's target/ and logs/ beside the warehouse, not in site-packages
    assert (tmp_path / "warehouse.duckdb.cache" / "dbt" / "target" / "manifest.json").is_file()
    after = sorted(str(p) for p in installed.rglob("*") if "__pycache__" not in p.parts)
    assert after == before, f"the demo wrote into the package: {sorted(set(after) - set(before))[:10]}"

    query = run(base, tmp_path, "query", "select count(*) as n from agg_metrics where visibility = 'paired'")
    assert query.returncode == 0 and "(1 rows)" in query.stdout, query.stderr
    sliced = run(base, tmp_path, "metrics", "--metric", "delta_htr", "--by", "model,relpos_band", "--format", "csv")
    assert sliced.returncode == 0 and sliced.stdout.count("delta_htr") > 10, sliced.stderr
    bundle = run(base, tmp_path, "bi", "superset", "--out", str(tmp_path / "bi"))
    assert bundle.returncode == 0 and (tmp_path / "bi" / "hindsight_dashboard.zip").is_file(), bundle.stderr

    # a local server nobody runs: the run says so about the connection, with no import error or traceback
    answer = run(base, tmp_path, "answer", "--model", "llamacpp:m", "--base-url", "http://127.0.0.1:9/v1", "--limit", "1")
    text = answer.stdout + answer.stderr
    assert "Traceback" not in text and "ModuleNotFoundError" not in text, text[-3000:]
    assert "Connection" in text or "connect" in text, text[-3000:]


@pytest.mark.parametrize("args, extra", [
    (["build", "--target", "spark"], "spark"),
    (["load", "inspect", "missing.eval"], "inspect"),
])
def test_a_command_whose_extra_is_missing_says_which_in_one_line(base, tmp_path, args, extra):
    done = run(base, tmp_path, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pip install 'hindsight-warehouse[{extra}]'" in lines[0], done.stderr


def test_bi_requirements_pin_the_projects_duckdb(base, tmp_path):
    done = run(base, tmp_path, "bi", "requirements")
    assert done.returncode == 0, done.stderr
    version = subprocess.run([str(base[0] / "python"), "-c", "import duckdb; print(duckdb.__version__)"],
                             capture_output=True, text=True, env=base[1]).stdout.strip()
    assert f"duckdb=={version}" in done.stdout.split() and any(line.startswith("duckdb-engine==") for line in done.stdout.split())
