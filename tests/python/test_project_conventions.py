"""The project's own conventions: the dbt project checked on its manifest (a stand-in for
dbt-project-evaluator, which cannot be installed offline), the public marts declared once,
and the import directions of the `ingest` package."""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import PROJECT, cli_env, new_warehouse
from ingest.publish.marts import public_marts

# which stage of `ingest` may import which: each arrow points down the data flow
# (files -> raw -> models asked -> statistics -> what analysts read); the top-level
# core modules (db, errors, config) are shared by all, and the CLI may import anything.
STAGES = ["load", "llm", "stats", "publish", "demo", "spark", "serve", "explore", "collect"]
CORE = {"db", "errors", "config"}
ALLOWED = {
    "core": {"core"},
    "load": {"core", "load"},
    "llm": {"core", "load", "llm"},
    "stats": {"core", "stats"},
    "publish": {"core", "stats", "publish", "serve"},   # readers read the published snapshot
    "serve": {"core", "serve"},      # snapshots of the marts, and dbt's plugin that publishes them
    # a reader of the snapshot, with slices' estimator, and the prompts a request was rendered with
    "explore": {"core", "stats", "publish", "serve", "explore", "llm"},
    "demo": {"core", "load", "llm", "stats", "publish", "demo", "build", "status", "collect"},
    # exports the landing zone, plans and runs dbt on Spark as the DuckDB build does, the estimators on its executors
    "spark": {"core", "stats", "publish", "spark", "build", "dbt_process", "collect"},
    # the runs' store: what runs write while they run, read by runs (the published snapshot beside it) and builds
    "collect": {"core", "serve", "collect"},
    "build": {"core", "dbt_process", "serve", "collect"},
    "dbt_process": {"core"},        # the dbt child of `hindsight build`
    "status": {"core", "load", "serve"},
    "cli": {"core", "load", "llm", "stats", "publish", "demo", "build", "status", "spark", "serve", "explore", "collect"},
    "models": {"core", "stats"},     # the dbt Python models only wire refs and configs to an estimator
}


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    db = new_warehouse(tmp_path_factory.mktemp("parse"))
    dbt = os.path.join(os.path.dirname(sys.executable), "dbt")
    done = subprocess.run([dbt, "parse"], cwd=PROJECT, capture_output=True, text=True, env=cli_env(db))
    assert done.returncode == 0, done.stdout[-3000:]
    return json.loads((db.parent / f"{db.stem}.dbt-target" / "manifest.json").read_text())


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


def test_public_marts_are_declared_once_contracted_described_and_in_main(manifest):
    nodes = models(manifest)
    public = {name for name, node in nodes.items() if node["access"] == "public"}
    # the list every reader uses (query allow-list, export, report, tests) is dbt's own declaration
    assert set(public_marts()) == public and len(public_marts()) == len(public)
    for name, node in nodes.items():
        in_marts = node["original_file_path"].startswith("models/marts/")
        assert (name in public) == in_marts, f"{name}: every model under marts/ is public, and only those"
        assert (node["schema"] == "main") == in_marts, name
    for name in public:
        node = nodes[name]
        assert node["config"]["contract"]["enforced"], name
        # incremental: the scored facts, appended to rather than rebuilt (docs/architecture.md, "Refresh at scale")
        assert node["config"]["materialized"] in ("table", "view", "incremental"), name
        assert node["language"] == "sql", f"{name}: a contract needs a SQL model"
        for column, spec in node["columns"].items():
            assert spec["description"] and spec["data_type"], f"{name}.{column}"


def test_every_model_has_a_key_test(manifest):
    keyed = set()
    for node in manifest["nodes"].values():
        if node["resource_type"] != "test":
            continue
        test = node.get("test_metadata", {}).get("name")
        if test in ("unique", "unique_combination_of_columns", "newest_keys_unique"):
            keyed.update(dep.split(".")[-1] for dep in node["depends_on"]["nodes"])
    # a view that joins its one parent's rows to rows of other models by their keys says so
    # (meta.key_tested_on): its key is its parent's. A view of several such branches names each
    # parent, and a unit test checks on fixed rows that its joins keep one row per parent key
    inherited = {name for name, node in models(manifest).items() if node["config"].get("meta", {}).get("key_tested_on")}
    unit_tested = {node["model"] for node in manifest["unit_tests"].values()}
    for name in inherited:
        node = models(manifest)[name]
        parents = node["config"]["meta"]["key_tested_on"]
        parents = [parents] if isinstance(parents, str) else parents
        assert node["config"]["materialized"] == "view", name
        for parent in parents:
            assert f"model.hindsight.{parent}" in node["depends_on"]["nodes"] and parent in keyed, (name, parent)
        assert len(parents) == 1 or name in unit_tested, f"{name}: a view of several parents' keys needs a unit test"
    missing = set(models(manifest)) - keyed - inherited - {"stg_raw__loads"}
    assert not missing, missing


def test_every_incremental_model_points_to_the_one_pattern(manifest):
    """The incremental machinery is explained once (docs/architecture.md); each incremental model's
    header points there and says only what is particular to it."""
    section = "docs/architecture.md#the-incremental-pattern"
    assert "### The incremental pattern" in (PROJECT / "docs" / "architecture.md").read_text()
    incremental = [node for node in models(manifest).values() if node["config"]["materialized"] == "incremental"]
    assert len(incremental) >= 8
    for node in incremental:
        assert section in node["raw_code"], f"{node['original_file_path']}: its header does not point to {section}"


def test_one_yaml_per_model_folder(manifest):
    folders = {}
    for node in models(manifest).values():
        folder = node["original_file_path"].rsplit("/", 1)[0]
        folders.setdefault(folder, set()).add(node["patch_path"].split("://")[-1] if node["patch_path"] else None)
    for folder, patches in folders.items():
        assert len(patches) == 1 and None not in patches, (folder, patches)


def test_every_requests_mart_is_read_by_an_exposed_runner(manifest):
    """No prompt is sent that is not a row of a requests mart: each requests mart feeds a runner."""
    requests = {f"model.hindsight.{name}" for name in models(manifest) if name.endswith("_requests")}
    assert {"model.hindsight.fct_answer_requests", "model.hindsight.fct_narrative_requests",
            "model.hindsight.fct_judgment_requests", "model.hindsight.fct_question_generation_requests"} <= requests
    exposed = {dep for exposure in manifest["exposures"].values() for dep in exposure["depends_on"]["nodes"]}
    assert requests <= exposed, requests - exposed


def test_the_runners_read_their_prompts_from_requests_marts_only():
    """The commands that ask models select from requests marts (and the raw ledger), nothing else;
    dim_questions and int_hb_dates only for the hidden fields a labelled simulator needs, never for a prompt."""
    for module in ("answer", "judge", "question_generator", "hb_audit_runner"):
        source = (PROJECT / "ingest" / "llm" / f"{module}.py").read_text()
        relations = set(re.findall(r"\b(?:from|join)\s+((?:main\.|staging\.|intermediate\.)?(?:fct|dim|agg|int|stg)_\w+)",
                                   source))
        assert relations and {r for r in relations if not r.endswith("_requests")} <= {"dim_questions", "intermediate.int_hb_dates"}, \
            (module, relations)


def test_every_column_of_every_mart_is_described_for_the_docs(manifest, demo_warehouse):
    """The docs site describes every mart and column, and nothing but the public marts is in main:
    checked against the relations the demo built."""
    db, _, _ = demo_warehouse
    nodes = models(manifest)
    with duckdb.connect(str(db), read_only=True) as con:
        built = con.execute("""select table_name, column_name from information_schema.columns
                               where table_schema = 'main' order by table_name, ordinal_position""").fetchall()
    assert {table for table, _ in built} == set(public_marts())
    undescribed = [f"{table}.{column}" for table, column in built
                   if table not in nodes or not nodes[table]["columns"].get(column, {}).get("description")]
    assert undescribed == []


def _stage(path: Path) -> str:
    parts = path.relative_to(PROJECT).with_suffix("").parts
    if parts[0] == "models":
        return "models"
    if len(parts) > 2 and parts[1] in STAGES:
        return parts[1]
    return "core" if parts[-1] in CORE | {"__init__"} else parts[-1]


def _imports(path: Path):
    """(imported module, names) for every `ingest` import in a file, top-level or inside a function."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ingest":
            yield node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "ingest":
                    yield alias.name, []


def _target_stage(module: str, names: list[str]) -> list[str]:
    parts = module.split(".")[1:]
    if not parts:                               # `from ingest import stats` names a stage
        return [n if n in STAGES else ("core" if n in CORE else n) for n in names]
    head = parts[0]
    return [head] if head in STAGES else ["core" if head in CORE else head]


def test_imports_point_down_the_data_flow_and_never_at_private_names():
    files = sorted((PROJECT / "ingest").rglob("*.py")) + sorted((PROJECT / "models").rglob("*.py"))
    assert len(files) > 20
    wrong = []
    for path in files:
        stage = _stage(path)
        for module, names in _imports(path):
            for target in _target_stage(module, names):
                if target not in ALLOWED[stage]:
                    wrong.append(f"{path.relative_to(PROJECT)}: {stage} imports {module} ({target})")
            private = [n for n in names if n.startswith("_") and not (n.startswith("__") and n.endswith("__"))]
            if private:
                wrong.append(f"{path.relative_to(PROJECT)}: imports private {', '.join(private)} from {module}")
    assert wrong == []


def _module_graph() -> dict[str, set[str]]:
    """Module -> the `ingest` modules it imports (top-level or inside a function)."""
    def name_of(path: Path) -> str:
        return ".".join(path.relative_to(PROJECT).with_suffix("").parts).removesuffix(".__init__")

    known = {name_of(path) for path in (PROJECT / "ingest").rglob("*.py")}
    graph = {}
    for path in (PROJECT / "ingest").rglob("*.py"):
        targets = set()
        for module, names in _imports(path):
            submodules = {f"{module}.{n}" for n in names} & known
            targets |= submodules or ({module} & known)
        graph[name_of(path)] = targets - {name_of(path)}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_inside_a_stage_or_anywhere():
    """Imports inside a stage point one way too: a module never imports, directly or through others,
    a module that imports it back (the runner and the batch path once did)."""
    graph = _module_graph()
    assert "ingest.llm.runner" in graph["ingest.llm.batch"] and "ingest.llm.batch" not in graph["ingest.llm.runner"]
    assert _cycles(graph) == []
    # the check finds a cycle when there is one
    assert _cycles({**graph, "ingest.llm.runner": graph["ingest.llm.runner"] | {"ingest.llm.batch"}}) == [
        ["ingest.llm.batch", "ingest.llm.runner"]]


def test_no_more_than_eight_modules_at_the_top_of_ingest():
    top = [p.name for p in (PROJECT / "ingest").glob("*.py")]
    assert len(top) <= 8, top
    assert {p.name for p in (PROJECT / "ingest").iterdir() if p.is_dir() and p.name != "__pycache__"} >= set(STAGES)


def test_every_import_of_the_package_is_declared():
    """deptry: a module the package imports is a requirement of the base install or of an extra, never
    one that only arrives with another package (httpx once came only with an extra CI installs)."""
    done = subprocess.run([sys.executable, "-m", "deptry", "."], cwd=PROJECT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Scanning" in done.stdout + done.stderr and "No dependency issues found" in done.stdout + done.stderr
