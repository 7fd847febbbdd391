"""The Superset dashboard as a new user meets it: docs/slicing.md's recipe run as written, from an empty
folder (Superset 6.1 in an environment of its own, from `hindsight bi requirements` alone), on the
demo; every chart's data, through Superset's REST API and as the browser's own chart queries return
it, equal to `hindsight metrics` and the marts; a changed bundle re-imported changes every kind of
object in place; the docs' screenshot taken in headless Chromium."""
from __future__ import annotations

import io
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import zipfile
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_report_browser import browser  # noqa: F401 - the Chromium fixture

from conftest import PROJECT, cli_env, hindsight
from ingest.publish.bi import SUPERSET, requirements
from ingest.publish.numbers import fixed
from ingest.publish.slices import slice_metrics
from ingest.publish.superset import DATABASE, FILTERS, ROOT, SLUG
from ingest.serve.snapshots import open_marts
from ingest.stats.trust import significance_word

MARKER = "<!-- superset-recipe: run by tests/python/test_superset.py -->"
URL = "http://localhost:8088"
SCREENSHOT = PROJECT / "docs" / "img" / "superset-dashboard.png"


def recipe() -> str:
    found = re.search(re.escape(MARKER) + r"\s*```sh\n(.*?)```", (PROJECT / "docs" / "slicing.md").read_text(), re.S)
    assert found, "docs/slicing.md: the Superset recipe is gone"
    return found.group(1)


@dataclass
class Superset:
    folder: Path
    env: dict
    password: str
    db: Path

    @contextmanager
    def client(self):
        """An HTTP client signed in as the recipe's admin."""
        import httpx

        with httpx.Client(base_url=URL, timeout=120) as client:
            login = client.post("/api/v1/security/login",
                                json={"username": "admin", "password": self.password, "provider": "db", "refresh": False})
            assert login.status_code == 200, login.text
            client.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
            yield client


@pytest.fixture(scope="module")
def superset(demo_warehouse, tmp_path_factory):
    """docs/slicing.md's recipe, run by bash as written in an empty folder, with the project's
    environment activated (its bin/ first on the path) and the demo as the warehouse."""
    db = demo_warehouse[0]
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 8088)) == 0:
            pytest.fail("port 8088, which the documented recipe uses, is taken by another process")
    folder = tmp_path_factory.mktemp("superset-recipe")
    env = {**{k: v for k, v in cli_env(db).items() if not k.startswith(("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH"))},
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    text = recipe()
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=2400)
    pid_file = folder / "superset" / "superset.pid"
    try:
        log = folder / "superset" / "superset.log"
        assert done.returncode == 0, (done.stdout[-3000:] + done.stderr[-5000:]
                                      + (log.read_text()[-3000:] if log.exists() else ""))
        assert f"imported: {URL}/superset/dashboard/{SLUG}/" in done.stdout
        password = re.search(r"export SUPERSET_PASSWORD=(\S+)", text).group(1)
        yield Superset(folder / "superset", env, password, db)
    finally:
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGTERM)
            except ProcessLookupError:
                pass


def charts_data(client) -> dict[str, list[dict]]:
    """Each chart of the dashboard's rows, by title, through the REST API (its saved query)."""
    out = {}
    for chart in client.get(f"/api/v1/dashboard/{SLUG}/charts").json()["result"]:
        reply = client.get(f"/api/v1/chart/{chart['id']}/data/")
        assert reply.status_code == 200, reply.text[:2000]
        out[chart["slice_name"]] = reply.json()["result"][0]["data"]
    return out


def same(a, b) -> bool:
    return (a is None and (b is None or (isinstance(b, float) and math.isnan(b)))) or a == pytest.approx(b, abs=1e-12)


def check_charts(rows_by_title: dict[str, list[dict]], db: Path) -> int:
    """Every chart's rows equal hindsight metrics and the marts; returns the rows compared."""
    with closing(open_marts(db)) as con:
        interval = slice_metrics(["delta_htr"], ["case__cohort", "model", "condition"], con=con)
        by_band = slice_metrics(["delta_htr"], ["model", "relpos_band"], con=con)
        by_format = con.sql("select * from agg_metrics_by_format where metric = 'acc'").df()
        build, = con.execute("select dbt_invocation_id from dim_build").fetchone()
    titles = {title.split(",")[0].split(" (")[0]: rows for title, rows in rows_by_title.items()}
    assert set(titles) == {"The build shown", "ΔHTR with its 95% interval", "ΔHTR by model × condition", "Acc by format",
                           "ΔHTR by RelPos band"}, titles.keys()
    assert [r["dbt_invocation_id"] for r in titles["The build shown"]] == [build]

    expected = {(r.case__cohort, r.model, r.condition, r.answer__prompt_variant): r for r in interval.itertuples()}
    rows = titles["ΔHTR by model × condition"]
    assert len(rows) == len(expected) > 20
    for row in rows:
        cell = expected[(row["cohort"], row["model"], row["condition_label"].split(" · ")[0], row["prompt_variant"])]
        assert all(same(row[k], getattr(cell, k)) for k in ("estimate", "ci_low", "ci_high", "n_cases", "n_questions")), (row, cell)
        shown = (f"{fixed(cell.estimate)} [{fixed(cell.ci_low)}, {fixed(cell.ci_high)}]" if not math.isnan(cell.ci_low)
                 else f"{fixed(cell.estimate)} (no interval: 1 case)")
        assert row["estimate_ci"] == shown + (" (few cases)" if cell.few_cases and not math.isnan(cell.ci_low) else "")
        assert " · " in row["condition_label"]
        # never a bare "yes" over too few cases: the flag beside the word, and the caution the slice gives
        assert row["significant_flagged"] == significance_word(cell.significant, cell.few_cases), (row, cell)
        assert row["caution"] == (cell.caution if isinstance(cell.caution, str) else None)

    # the interval plot: a row per cell with an interval, its three series named as the tooltip says them
    plotted = titles["ΔHTR with its 95% interval"]
    assert len(plotted) == int((interval["n_cases"] >= 2).sum()) > 20
    for row in plotted:
        assert set(row) == {"cell", "estimate", "95% low", "95% high"}, row
        label = row["cell"].removesuffix(" (few cases)")
        cell = expected[tuple(label.split(" · "))]
        assert (label != row["cell"]) == cell.few_cases, row
        assert (row["95% low"], row["estimate"], row["95% high"]) == pytest.approx(
            (cell.ci_low, cell.estimate, cell.ci_high), abs=1e-12), (row, cell)

    rows = titles["Acc by format"]
    assert len(rows) == len(by_format) > 50
    keyed = {(r.cohort, r.model, r.condition, r.format, None if pd.isna(r.options_type) else r.options_type, r.prompt_variant,
              r.visibility): r for r in by_format.itertuples()}
    for row in rows:
        cell = keyed[(row["cohort"], row["model"], row["condition_label"].split(" · ")[0], row["format"], row["options_type"],
                      row["prompt_variant"], row["visibility"])]
        assert same(row["estimate"], cell.estimate) and same(row["ci_low"], cell.ci_low) and row["n_questions"] == cell.n_questions

    expected = {(r.model, r.question__relpos_band, r.answer__prompt_variant): r for r in by_band.itertuples() if r.n_questions > 0}
    rows = [r for r in titles["ΔHTR by RelPos band"] if r["delta_htr_n_questions"]]
    assert len(rows) == len(expected) > 5
    for row in rows:
        order, band = row["relpos_band_label"].split(" · ")
        assert order == str(["early", "middle", "late"].index(band) + 1)
        cell = expected[(row["model"], band, row["prompt_variant"])]
        assert same(row["delta_htr"], cell.estimate) and row["delta_htr_n_questions"] == cell.n_questions, (row, cell)
    return sum(len(rows) for rows in titles.values())


@pytest.mark.slow
def test_the_documented_recipe_gives_a_dashboard_whose_charts_equal_hindsight_metrics(superset):
    with superset.client() as client:
        assert check_charts(charts_data(client), superset.db) > 100
        board = client.get(f"/api/v1/dashboard/{SLUG}").json()["result"]
        filters = json.loads(board["json_metadata"])["native_filter_configuration"]
        assert [f["name"] for f in filters] == ["Cohort", "Model", "Condition", "Prompt variant"]


def parts_query(client, dataset_id: int, groupby: list[str]) -> list[dict]:
    body = {"datasource": {"id": dataset_id, "type": "table"}, "force": True, "result_format": "json", "result_type": "full",
            "queries": [{"columns": groupby, "metrics": ["delta_htr", "acc"], "filters": [], "row_limit": 1000,
                         "orderby": [[c, True] for c in groupby]}]}
    reply = client.post("/api/v1/chart/data", json=body)
    assert reply.status_code == 200, reply.text[:2000]
    return reply.json()["result"][0]["data"]


@pytest.mark.slow
def test_a_chart_of_the_parts_cannot_pool_the_prompt_variants(superset):
    """A user's own chart by model alone: the dataset's metrics give no number, rather than one that
    mixes the standard and warning prompts; by model and prompt variant they give the slice's."""
    with superset.client() as client:
        dataset = client.get("/api/v1/dataset/", params={"q": "(filters:!((col:table_name,opr:eq,value:fct_metric_parts)))"})
        dataset_id = dataset.json()["result"][0]["id"]
        pooled = parts_query(client, dataset_id, ["model"])
        assert pooled and all(r["delta_htr"] is None and r["acc"] is None for r in pooled
                              if r["model"] in ("sim:hindsight@0.3",)), pooled
        kept = parts_query(client, dataset_id, ["model", "prompt_variant"])
    with closing(open_marts(superset.db)) as con:
        expected = slice_metrics(["delta_htr"], ["model"], con=con)
    cells = {(r.model, r.answer__prompt_variant): r.estimate for r in expected.itertuples() if r.n_questions}
    assert {(r["model"], r["prompt_variant"]): r["delta_htr"] for r in kept if r["delta_htr"] is not None} == pytest.approx(cells)


def changed(bundle: bytes, serve_copy: Path) -> bytes:
    """BUNDLE with one change to every kind of object: the database's URI, a dataset's description and
    a new metric, a chart's title, the dashboard's title."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(bundle)) as source, zipfile.ZipFile(out, "w") as target:
        for name in source.namelist():
            content = yaml.safe_load(source.read(name))
            if name.endswith(f"databases/{DATABASE.replace(' ', '_')}.yaml"):
                content["sqlalchemy_uri"] = f"duckdb:///{serve_copy}"
            elif name.endswith("datasets/hindsight_marts/fct_metric_parts.yaml"):
                content["description"] = "changed description"
                content["metrics"].append({**content["metrics"][0], "metric_name": "probe_metric", "verbose_name": "Probe"})
            elif name.endswith("charts/delta_htr_interval.yaml"):
                content["slice_name"] = "ΔHTR, retitled"
            elif name.endswith("dashboards/hindsight_bias.yaml"):
                content["dashboard_title"] = "Hindsight bias (changed)"
            target.writestr(name, yaml.safe_dump(content, sort_keys=False, allow_unicode=True))
    return out.getvalue()


def state(client) -> dict:
    """(id, what the re-import test changes) of each kind of object."""
    board = client.get(f"/api/v1/dashboard/{SLUG}").json()["result"]
    charts = {c["id"]: c["slice_name"] for c in client.get(f"/api/v1/dashboard/{SLUG}/charts").json()["result"]}
    database = next(d for d in client.get("/api/v1/database/").json()["result"] if d["database_name"] == DATABASE)
    uri = client.get(f"/api/v1/database/{database['id']}/connection").json()["result"]["sqlalchemy_uri"]
    dataset = client.get("/api/v1/dataset/", params={"q": "(filters:!((col:table_name,opr:eq,value:fct_metric_parts)))"})
    dataset_id = dataset.json()["result"][0]["id"]
    detail = client.get(f"/api/v1/dataset/{dataset_id}").json()["result"]
    return {"dashboard": (board["id"], board["dashboard_title"]), "charts": charts, "database": (database["id"], uri),
            "dataset": (dataset_id, detail["description"], sorted(m["metric_name"] for m in detail["metrics"]))}


@pytest.mark.slow
def test_importing_a_changed_bundle_updates_every_object_in_place(superset, tmp_path):
    bundle = superset.folder / "bi" / f"{ROOT}.zip"
    serve_copy = tmp_path / "elsewhere.marts.duckdb"
    with superset.client() as client:
        before = state(client)
    edited = tmp_path / "changed.zip"
    edited.write_bytes(changed(bundle.read_bytes(), serve_copy))
    env = {"SUPERSET_PASSWORD": superset.password}
    hindsight(superset.db, "bi", "import", edited, "--superset", URL, "--user", "admin", env=env)
    with superset.client() as client:
        after = state(client)
    assert after["dashboard"] == (before["dashboard"][0], "Hindsight bias (changed)")
    assert after["database"] == (before["database"][0], f"duckdb:///{serve_copy}")
    assert after["dataset"] == (before["dataset"][0], "changed description", sorted([*before["dataset"][2], "probe_metric"]))
    assert after["charts"].keys() == before["charts"].keys()
    assert {i: t for i, t in after["charts"].items() if t != before["charts"][i]} == {
        next(i for i, t in before["charts"].items() if t.startswith("ΔHTR by model")): "ΔHTR, retitled"}
    # the bundle as written puts every object back, the extra metric gone, the ids still the same
    hindsight(superset.db, "bi", "import", bundle, "--superset", URL, "--user", "admin", env=env)
    with superset.client() as client:
        assert state(client) == before


@pytest.mark.slow
@pytest.mark.browser
def test_the_browser_draws_the_dashboard_from_chart_queries_equal_to_hindsight_metrics(superset, browser, tmp_path):  # noqa: F811
    """The dashboard opened as a user opens it: what the browser's own chart queries return equals
    hindsight metrics and the marts, the filters and the interval column are drawn; the screenshot
    is the docs' (HINDSIGHT_WRITE_SCREENSHOTS=1 writes it into docs/img)."""
    context = browser.contexts[0] if browser.contexts else browser.new_context()
    page = context.new_page()
    # tall enough for every chart: Superset draws only the charts in view (dashboard virtualization)
    page.set_viewport_size({"width": 1400, "height": 2800})
    replies = []
    page.on("response", lambda reply: replies.append(reply) if "/api/v1/chart/data" in reply.url else None)
    page.goto(f"{URL}/login/")
    page.wait_for_selector("#username")
    page.fill("#username", "admin")
    page.fill("#password", superset.password)
    page.click("[data-test=login-button]")
    page.wait_for_load_state("networkidle")
    page.goto(f"{URL}/superset/dashboard/{SLUG}/")
    page.wait_for_load_state("networkidle")
    page.wait_for_function("() => document.querySelectorAll('[data-test=\"chart-container\"]').length >= 4", timeout=60000)
    page.wait_for_load_state("networkidle")
    drawn = {}
    for reply in replies:
        assert reply.status == 200, reply.text()[:2000]
        form = json.loads(reply.request.post_data or "{}").get("form_data", {})
        if form.get("slice_id"):              # (the filters' own queries, for their options, have none)
            drawn[form["slice_id"]] = reply.json()["result"][0]["data"]
    with superset.client() as client:
        titles = {c["id"]: c["slice_name"] for c in client.get(f"/api/v1/dashboard/{SLUG}/charts").json()["result"]}
    assert set(drawn) == set(titles)
    assert check_charts({titles[i]: rows for i, rows in drawn.items()}, superset.db) > 100
    text = page.inner_text("body")
    for label in ("Cohort", "Model", "Condition", "Prompt variant", "Estimate [95% CI]", "The build shown", "1 · early",
                  "each row a cell: estimate, 95% low, 95% high"):
        assert label in text, label
    # the interval plot's tooltip says what each number is; its 60 rows each have their label
    plot = page.locator("[data-test-chart-name^='ΔHTR with its 95% interval'] canvas").first
    box = plot.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.3)
    tip = page.wait_for_function("""() => Array.from(document.querySelectorAll('div')).map(d => d.innerText || '')
        .find(t => t.includes('95% low') && t.includes('95% high') && t.includes('estimate'))""", timeout=10000).json_value()
    assert not re.search(r"Mean|Quartile|Total", tip), tip
    assert re.search(r"\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]", text)          # an interval drawn as an interval
    shot = tmp_path / "superset-dashboard.png"
    page.wait_for_function("() => document.querySelectorAll('canvas, table').length >= 5", timeout=60000)
    page.wait_for_timeout(2000)                 # the plot's animation
    page.screenshot(path=str(shot))
    # the condition filter offers the conditions by name (after the screenshot: its list would cover the charts)
    page.mouse.move(10, 10)
    # the filter bar's selects, in FILTERS' order: the third is the condition's
    order = page.evaluate("""() => Array.from(document.querySelectorAll('[data-test^="NATIVE_FILTER-"]'))
        .map(e => e.getAttribute('data-test'))""")
    assert order == [f"NATIVE_FILTER-{column}" for column, _, _ in FILTERS], order
    page.locator("[data-test='filter-bar'] .ant-select").nth(order.index("NATIVE_FILTER-condition_label")).click()
    page.wait_for_selector(".ant-select-item-option", timeout=30000)
    assert "1.1 · Original narrative + H TTS" in page.locator(".ant-select-item-option").all_inner_texts()
    page.keyboard.press("Escape")
    page.close()
    assert shot.stat().st_size > 100_000
    if os.environ.get("HINDSIGHT_WRITE_SCREENSHOTS"):
        SCREENSHOT.parent.mkdir(exist_ok=True)
        SCREENSHOT.write_bytes(shot.read_bytes())
    assert SCREENSHOT.is_file()


def test_the_bundle_names_the_serving_file_where_superset_sees_it(warehouse, tmp_path):
    uri = "duckdb:////data/hindsight/warehouse.marts.duckdb"
    hindsight(warehouse, "bi", "superset", "--out", tmp_path, "--serving-uri", uri)
    with zipfile.ZipFile(tmp_path / f"{ROOT}.zip") as bundle:
        database = yaml.safe_load(bundle.read(f"{ROOT}/databases/{DATABASE.replace(' ', '_')}.yaml"))
        metadata = yaml.safe_load(bundle.read(f"{ROOT}/metadata.yaml"))
    assert database["sqlalchemy_uri"] == uri and metadata["type"] == "assets"
    done = hindsight(warehouse, "bi", "superset", "--out", tmp_path / "x", "--serving-uri", "sqlite:///x.db", expect=2)
    assert "--serving-uri: 'sqlite:///x.db' is not a DuckDB file URI" in done.stderr and not (tmp_path / "x").exists()


def test_bi_requirements_list_everything_superset_needs(warehouse):
    printed = hindsight(warehouse, "bi", "requirements").stdout
    lines = [line for line in printed.splitlines() if line and not line.startswith("#")]
    assert lines == [line for line in requirements().splitlines() if line and not line.startswith("#")]
    assert all(pin in lines for pin in SUPERSET) and any(line.startswith("duckdb==") for line in lines)
    readers = hindsight(warehouse, "bi", "requirements", "--readers-only").stdout
    assert "apache-superset" not in readers and "duckdb-engine==" in readers


def test_import_into_a_superset_that_is_not_there_ends_in_one_line(warehouse, tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    hindsight(warehouse, "bi", "superset", "--out", tmp_path)
    done = hindsight(warehouse, "bi", "import", tmp_path / f"{ROOT}.zip", "--superset", f"http://127.0.0.1:{port}",
                     env={"SUPERSET_PASSWORD": "x"}, expect=2)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"Superset at http://127.0.0.1:{port}: nothing answers there" in lines[0], done.stderr


def test_the_parts_dataset_keeps_every_relpos_band_and_every_sum():
    """A group whose questions all fall in two RelPos bands still has the third band's row (zero parts:
    no value, but the pivot keeps the column), and every sum of the parts is what the mart's is."""
    import duckdb

    from ingest.publish.superset import parts_dataset

    dataset = parts_dataset()
    con = duckdb.connect()
    con.execute("""create table fct_metric_parts as
        select * from (values
            ('glp1', 'A', '2.1', 'standard', 'paired', 'q1', 'middle', 1.0, 1, 0.5, 1),
            ('glp1', 'A', '2.1', 'standard', 'paired', 'q2', 'late', 0.0, 1, 1.0, 2),
            ('glp1', 'B', '2.1', 'standard', 'paired', 'q1', 'early', 1.0, 1, 0.0, 1),
            ('glp1', 'B', '2.1', 'standard', 'paired', 'q2', 'middle', 1.0, 1, 1.0, 1),
            ('glp1', 'B', '2.1', 'standard', 'paired', 'q3', 'late', -1.0, 1, 1.0, 1))
        as t (cohort, model, condition, prompt_variant, visibility, question_id, relpos_band, delta_htr_sum, delta_htr_n,
              acc_sum, acc_n)""")
    bands = con.sql(f"""select relpos_band, sum(delta_htr_sum) / nullif(sum(delta_htr_n), 0) as delta_htr, sum(delta_htr_n)
                        from ({dataset['sql']}) where model = 'A' group by all order by 1""").fetchall()
    assert bands == [("early", None, 0), ("late", 0.0, 1), ("middle", 1.0, 1)]
    summed = "select sum(delta_htr_sum), sum(delta_htr_n), sum(acc_sum), sum(acc_n), count(distinct question_id) from "
    assert con.execute(f"{summed} ({dataset['sql']})").fetchone() == con.execute(f"{summed} fct_metric_parts").fetchone()
