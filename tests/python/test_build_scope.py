"""What `hindsight build` refreshes (ingest/build.py): everything the first time, after a change
to the project or the build's arguments, with --all or --full-refresh, or when a model's relation is
missing; otherwise only what lies downstream of the raw tables that changed since the last build that
ended well (an update in place counts), and nothing when nothing did. The marts such a build leaves
equal a build from scratch: tests/python/test_refresh.py."""
from __future__ import annotations

import json

from conftest import new_warehouse
from ingest import build as build_scope
from ingest.db import connect


def built(con, args=()):
    """The scope of a build, recorded as if it had ended well."""
    scope = build_scope.plan(con, list(args))
    if scope.record:
        build_scope.record(con, scope)
    return scope


def fake_models(con):
    # the relations of every model, so that none counts as missing
    con.execute("create schema if not exists scratch")
    for name in build_scope.model_names():
        con.execute(f'create table scratch."{name}" (x integer)')


def test_a_build_refreshes_what_was_loaded_since_the_last_one(tmp_path):
    db = new_warehouse(tmp_path)
    with connect(db) as con:
        fake_models(con)
        first = built(con)
        assert first.select is None and first.why == "no earlier build recorded"
        assert built(con).select == []                           # nothing loaded since
        con.execute("insert into raw.questions values (1, 'q.jsonl', 1, 'q-1', 'glp1', 'case-1', 'sha', '{}', now())")
        scope = built(con)
        assert scope.select == ["source:raw.questions+", "dim_build"] and "questions" in scope.why
        assert built(con).select == []
        # an update in place changes the signature too
        con.execute("update raw.questions set payload = '{\"format\": \"true/false\"}'")
        assert built(con).select == ["source:raw.questions+", "dim_build"]
        # a raw table no model reads (the batch ledger) selects nothing, and its change is recorded
        con.execute("insert into raw.batch_calls (batch_key, call_id, purpose, target_id, sample_index, context) "
                    "values ('b', 'c', 'answer', 't', 0, '{}')")
        unread = built(con)
        assert unread.select == [] and "batch_calls" in unread.why
        assert built(con).select == [] and built(con).why == "nothing loaded since the last build"


def test_a_changed_project_arguments_or_relation_builds_everything(tmp_path, monkeypatch):
    db = new_warehouse(tmp_path)
    with connect(db) as con:
        fake_models(con)
        built(con, ["--exclude", "some_test"])
        assert built(con, ["--exclude", "some_test"]).select == []
        other = built(con, ["--vars", "{bootstrap_replicates: 200}"])
        assert other.select is None and "arguments changed" in other.why
        assert built(con, ["--all"]).select is None and built(con, ["--full-refresh"]).select is None
        assert built(con).select == []                           # --full-refresh and --all build what a plain build does
        # how many nodes run at once changes nothing built
        assert built(con, ["--threads", "1"]).select == [] and built(con, ["--threads=2"]).select == []
        partial = built(con, ["--select", "agg_metrics"])
        assert partial.select is None and not partial.record     # your own selection: run as asked, never a reference
        con.execute('drop table scratch."agg_metrics"')
        missing = built(con)
        assert missing.select is None and "agg_metrics" in missing.why
        con.execute('create table scratch."agg_metrics" (x integer)')
        assert built(con).select == []
        monkeypatch.setattr(build_scope, "PROJECT_INPUTS", [*build_scope.PROJECT_INPUTS, "README.md"])
        changed = built(con)
        assert changed.select is None and "project" in changed.why


def test_a_large_warehouse_builds_one_node_at_a_time_unless_told(tmp_path, monkeypatch):
    """Each DuckDB query uses every core: from a million answers up, dbt runs one node at a time."""
    db = new_warehouse(tmp_path)
    with connect(db) as con:
        assert build_scope.node_threads(con, []) == []
        con.execute("insert into raw.responses (load_id, source_file, line_number, response_id, question_id, model, condition, "
                    "visibility, prompt_variant, payload, loaded_at) select 1, 'r.jsonl', range, 'r' || range, 'q', 'm', '0', "
                    "'full', 'standard', '{}', now() from range(3)")
        monkeypatch.setattr(build_scope, "ONE_NODE_AT_A_TIME", 3)
        assert build_scope.node_threads(con, []) == ["--threads", "1"]
        assert build_scope.node_threads(con, ["--threads", "2"]) == [] and build_scope.node_threads(con, ["--threads=4"]) == []


def test_a_build_keeps_your_arguments_and_leaves_the_code_checks_to_the_test_suite(tmp_path, monkeypatch):
    db = new_warehouse(tmp_path)
    calls = []

    class Recorded:             # stands in for the dbt child: records what it is asked to build
        def __init__(self, db, flags):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def build(self, args):
            return calls.append(args) or True

    monkeypatch.setattr(build_scope, "DbtProcess", Recorded)
    with connect(db) as con:
        fake_models(con)
    assert build_scope.build(db, ["--exclude", "some_test"])                 # the first: everything
    with connect(db) as con:
        con.execute("insert into raw.questions values (1, 'q.jsonl', 1, 'q-1', 'glp1', 'case-1', 'sha', '{}', now())")
    assert build_scope.build(db, ["--exclude", "some_test"])                 # what was loaded
    everything, loaded = calls
    # neither runs the unit tests nor the equivalence checks: they test the code, and `make test` runs them
    assert everything == ["build", "--exclude", "some_test", "--exclude-resource-type", "unit_test", "--exclude", "tag:equivalence"]
    assert loaded[:3] == ["build", "--exclude", "some_test"]
    assert loaded[loaded.index("--select") + 1:loaded.index("--exclude-resource-type")] == ["source:raw.questions+", "dim_build"]
    assert loaded[-4:] == ["--exclude-resource-type", "unit_test", "--exclude", "tag:equivalence"]
    # your own selection runs as you gave it: every node, the code checks included
    assert build_scope.build(db, ["--select", "fqn:*"])
    assert calls[-1] == ["build", "--select", "fqn:*"]


def test_a_spark_catalog_has_its_own_ledger_and_a_catalog_missing_a_model_builds_everything(tmp_path, monkeypatch):
    """Spark builds plan as DuckDB's, against raw.spark_builds per catalog; the dbt process on Spark
    drops the plan when the catalog lacks a model of the last build's manifest."""
    from ingest.spark import dbt_on_spark
    from ingest.spark.build import spark_ledger

    db = new_warehouse(tmp_path)
    monkeypatch.setenv("HINDSIGHT_SPARK_WAREHOUSE", str(tmp_path / "one"))
    monkeypatch.delenv("HINDSIGHT_SPARK_REMOTE", raising=False)
    one = spark_ledger(db)
    monkeypatch.setenv("HINDSIGHT_SPARK_REMOTE", "sc://127.0.0.1:15002")
    server = spark_ledger(db)
    assert one.catalog == str((tmp_path / "one").resolve()) and server.catalog == "sc://127.0.0.1:15002"
    with connect(db) as con:
        fake_models(con)
        for ledger in (one, server):
            first = build_scope.plan(con, [], ledger)
            assert first.select is None and first.why == "no earlier build recorded"
            build_scope.record(con, first, ledger)
        con.execute("insert into raw.questions values (1, 'q.jsonl', 1, 'q-1', 'glp1', 'case-1', 'sha', '{}', now())")
        scope = build_scope.plan(con, [], one)
        assert scope.select == ["source:raw.questions+", "dim_build"]
        build_scope.record(con, scope, one)
        assert build_scope.plan(con, [], one).select == []
        assert build_scope.plan(con, [], server).select == ["source:raw.questions+", "dim_build"]   # not yet built there
        assert build_scope.plan(con, []).select is None          # nor is DuckDB's ledger touched
        assert con.execute("select count(*) from raw.spark_builds").fetchone() == (3,)

    class Catalog:                # a session's `show tables in SCHEMA`
        def __init__(self, tables):
            self.tables = tables

        def sql(self, statement):
            schema = statement.split("`")[1]
            if schema not in {s for s, _ in self.tables}:
                raise RuntimeError(f"[SCHEMA_NOT_FOUND] The schema `{schema}` cannot be found.")
            rows = [type("Row", (), {"tableName": t}) for s, t in self.tables if s == schema]
            return type("Frame", (), {"collect": lambda _: rows})()

    manifest = tmp_path / "target" / "manifest.json"
    monkeypatch.setenv("DBT_TARGET_PATH", str(manifest.parent))
    monkeypatch.setenv("HINDSIGHT_SPARK_SCOPE", "source:raw.questions+ dim_build")
    args = ["build", "--target", "spark"]
    assert dbt_on_spark.scoped(args, Catalog(set())) == args                   # no manifest yet: everything
    manifest.parent.mkdir()
    node = {"resource_type": "model", "config": {"materialized": "table"}}
    manifest.write_text(json.dumps({"nodes": {
        "model.h.a": {**node, "schema": "main", "alias": "agg_metrics"},
        "model.h.b": {**node, "schema": "intermediate", "alias": "int_answers_scored"},
        "model.h.e": {**node, "schema": "intermediate", "alias": "ephemeral_one", "config": {"materialized": "ephemeral"}},
        "test.h.t": {"resource_type": "test", "schema": "main", "alias": "a_test", "config": {}}}}))
    assert dbt_on_spark.missing_models(Catalog({("main", "agg_metrics")}), manifest) == ["intermediate.int_answers_scored"]
    assert dbt_on_spark.scoped(args, Catalog({("main", "agg_metrics")})) == args
    whole = Catalog({("main", "agg_metrics"), ("intermediate", "int_answers_scored")})
    assert dbt_on_spark.scoped(args, whole) == [*args, "--select", "source:raw.questions+", "dim_build"]
    monkeypatch.setenv("HINDSIGHT_SPARK_SCOPE", "")
    assert dbt_on_spark.scoped(args, whole) == args
