"""The dashboard bundle in a real Apache Superset 6.1, in a virtual environment of its own (it
cannot share the project's): `hindsight bi requirements` and Superset's own gaps installed there,
`superset import-dashboards` of `hindsight bi superset`'s bundle, and every chart's data through
Superset's REST API equal to `hindsight metrics` (and agg_metrics) for the same slice."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from conftest import PROJECT, hindsight
from ingest.publish.bi import SUPERSET, requirements
from ingest.publish.slices import slice_metrics
from ingest.serve.snapshots import open_marts

pytestmark = pytest.mark.slow
ADMIN = ("admin", "admin-password")


@pytest.fixture(scope="module")
def superset(tmp_path_factory):
    """(superset's bin folder, the environment it runs in)."""
    root = tmp_path_factory.mktemp("superset")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pins = root / "bi-requirements.txt"
    pins.write_text(requirements())
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                          "-r", str(pins), *SUPERSET], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr[-3000:]
    config = root / "superset_config.py"
    config.write_text(f'SECRET_KEY = "a-loopback-test-superset-{os.getpid()}"\n'
                      f'SQLALCHEMY_DATABASE_URI = "sqlite:///{root / "superset.db"}"\n')
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("HINDSIGHT_", "VIRTUAL_ENV", "PYTHON"))},
           "SUPERSET_CONFIG_PATH": str(config), "FLASK_APP": "superset"}
    bin_dir = venv / "bin"
    for args in (["db", "upgrade"],
                 ["fab", "create-admin", "--username", ADMIN[0], "--password", ADMIN[1], "--firstname", "a", "--lastname", "b",
                  "--email", "admin@example.invalid"],
                 ["init"]):
        done = subprocess.run([str(bin_dir / "superset"), *args], env=env, capture_output=True, text=True, cwd=root)
        assert done.returncode == 0, f"superset {' '.join(args)}: {done.stderr[-3000:]}"
    return bin_dir, env


def chart_data(superset, bundle: Path) -> dict:
    bin_dir, env = superset
    imported = subprocess.run([str(bin_dir / "superset"), "import-dashboards", "-p", str(bundle), "-u", ADMIN[0]],
                              env=env, capture_output=True, text=True)
    assert imported.returncode == 0 and "Error" not in imported.stdout, imported.stdout[-3000:] + imported.stderr[-3000:]
    done = subprocess.run([str(bin_dir / "python"), str(PROJECT / "tests" / "python" / "superset_chart_data.py"), *ADMIN,
                           "hindsight-bias"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def same(a, b) -> bool:
    return (a is None and (b is None or (isinstance(b, float) and math.isnan(b)))) or a == pytest.approx(b, abs=1e-12)


def test_the_bundle_imports_and_every_chart_equals_hindsight_metrics(superset, demo_warehouse, tmp_path):
    db = demo_warehouse[0]
    written = hindsight(db, "bi", "superset", "--out", tmp_path)
    bundle = tmp_path / "hindsight_dashboard.zip"
    assert bundle.exists() and "superset import-dashboards" in written.stdout
    data = chart_data(superset, bundle)
    assert data["dashboard"] == 200 and len(data["charts"]) == 3
    assert all(chart["status"] == 200 for chart in data["charts"].values()), data
    charts = {name.split(" ")[0] + ("-band" if "RelPos" in name else "-interval" if "interval" in name else ""): chart["data"]
              for name, chart in data["charts"].items()}

    with closing(open_marts(db)) as con:
        interval = slice_metrics(["delta_htr"], ["case__cohort", "model", "condition"], con=con)
        by_format = slice_metrics(["acc"], ["model", "format"], con=con)
        by_band = slice_metrics(["delta_htr"], ["model", "relpos_band"], con=con)

    # ΔHTR by model x condition with its interval: agg_metrics' rows, which hindsight metrics gives too
    expected = {(r.case__cohort, r.model, r.condition, r.answer__prompt_variant): r for r in interval.itertuples()}
    rows = charts["ΔHTR-interval"]
    assert len(rows) == len(expected) > 20
    for row in rows:
        cell = expected[(row["cohort"], row["model"], row["condition"], row["prompt_variant"])]
        assert all(same(row[k], getattr(cell, k)) for k in ("estimate", "ci_low", "ci_high", "n_cases")), (row, cell)

    # Acc by format: the dataset's metric (summed parts) is the estimate of the same slice
    expected = {(r.model, r.question__format, r.answer__prompt_variant, r.answer__visibility): r for r in by_format.itertuples()
                if r.n_questions > 0}
    rows = [r for r in charts["Acc"] if r["acc_n_questions"] > 0]
    assert len(rows) == len(expected) > 10
    for row in rows:
        cell = expected[(row["model"], row["format"], row["prompt_variant"], row["visibility"])]
        assert same(row["acc"], cell.estimate) and row["acc_n_questions"] == cell.n_questions, (row, cell)

    # ΔHTR by RelPos band
    expected = {(r.model, r.question__relpos_band, r.answer__prompt_variant): r for r in by_band.itertuples() if r.n_questions > 0}
    rows = [r for r in charts["ΔHTR-band"] if r["delta_htr_n_questions"] > 0]
    assert len(rows) == len(expected) > 5
    for row in rows:
        cell = expected[(row["model"], row["relpos_band"], row["prompt_variant"])]
        assert same(row["delta_htr"], cell.estimate) and row["delta_htr_n_questions"] == cell.n_questions, (row, cell)

    # importing again (a newer bundle) updates the same objects in place
    assert chart_data(superset, bundle)["charts"].keys() == data["charts"].keys()
