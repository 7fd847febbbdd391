"""The dbt project's own conventions, checked on the manifest (a stand-in for
dbt-project-evaluator, which cannot be installed offline)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import PROJECT

PUBLIC_MARTS = {"dim_cases", "dim_questions", "fct_tts_events", "agg_tts_quality", "agg_relpos",
                "fct_answer_requests", "fct_narrative_requests", "fct_answers", "fct_answer_pairs",
                "agg_metrics", "agg_metrics_by_format", "agg_metrics_by_eval_target"}


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    db = tmp_path_factory.mktemp("parse") / "w.duckdb"
    dbt = os.path.join(os.path.dirname(sys.executable), "dbt")
    done = subprocess.run([dbt, "parse"], cwd=PROJECT, capture_output=True, text=True,
                          env={**os.environ, "HINDSIGHT_DB": str(db)})
    assert done.returncode == 0, done.stdout[-3000:]
    return json.loads((PROJECT / "target" / "manifest.json").read_text())


def models(manifest):
    return {n["name"]: n for n in manifest["nodes"].values() if n["resource_type"] == "model"}


def test_every_model_states_its_grain(manifest):
    for name, node in models(manifest).items():
        assert node["description"].startswith("One row per"), name


def test_prefix_matches_folder_and_source_only_in_staging(manifest):
    folders = {"stg_": "staging", "int_": "intermediate", "dim_": "marts", "fct_": "marts", "agg_": "marts"}
    for name, node in models(manifest).items():
        prefix = name[:4]
        assert prefix in folders, name
        assert node["original_file_path"].startswith(f"models/{folders[prefix]}/"), name
        uses_source = bool(node["sources"])
        assert uses_source == (prefix == "stg_"), name


def test_public_marts_are_contracted_described_and_in_main(manifest):
    nodes = models(manifest)
    assert PUBLIC_MARTS <= set(nodes)
    for name in PUBLIC_MARTS:
        node = nodes[name]
        assert node["config"]["contract"]["enforced"], name
        assert node["schema"] == "main", name
        assert node["config"]["materialized"] == "table", name
        for column, spec in node["columns"].items():
            assert spec["description"], f"{name}.{column}"


def test_every_model_has_a_key_test(manifest):
    keyed = set()
    for node in manifest["nodes"].values():
        if node["resource_type"] != "test":
            continue
        test = node.get("test_metadata", {}).get("name")
        if test in ("unique", "unique_combination_of_columns"):
            keyed.update(dep.split(".")[-1] for dep in node["depends_on"]["nodes"])
    missing = set(models(manifest)) - keyed - {"stg_raw__loads"}
    assert not missing, missing


def test_one_yaml_per_model_folder(manifest):
    folders = {}
    for node in models(manifest).values():
        folder = node["original_file_path"].rsplit("/", 1)[0]
        folders.setdefault(folder, set()).add(node["patch_path"].split("://")[-1] if node["patch_path"] else None)
    for folder, patches in folders.items():
        assert len(patches) == 1 and None not in patches, (folder, patches)


def test_the_runner_loop_is_an_exposure(manifest):
    exposure = manifest["exposures"]["exposure.hindsight.answer_runner"]
    assert {"model.hindsight.fct_answer_requests", "model.hindsight.fct_narrative_requests"} <= set(exposure["depends_on"]["nodes"])


def test_every_column_of_every_mart_is_described_for_the_docs(manifest, demo_warehouse):
    """The docs site describes every mart and column: checked against the relations the demo built."""
    import duckdb

    db, _, _ = demo_warehouse
    nodes = models(manifest)
    with duckdb.connect(str(db), read_only=True) as con:
        built = con.execute("""select table_name, column_name from information_schema.columns
                               where table_schema = 'main' order by table_name, ordinal_position""").fetchall()
    assert len({table for table, _ in built}) >= 25
    undescribed = [f"{table}.{column}" for table, column in built
                   if table not in nodes or not nodes[table]["columns"].get(column, {}).get("description")]
    assert undescribed == []
    from ingest.query import PUBLIC_MARTS as QUERYABLE
    assert set(QUERYABLE) <= {table for table, _ in built}
