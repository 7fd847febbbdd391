"""The table functions Spark runs on its executors (ingest/spark/functions.py), called here the way a
Spark task calls them: eval() once per Arrow batch of the task's rows, then terminate(). No JVM is
needed; test_spark_engine.py runs them inside Spark builds."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
functions = pytest.importorskip("ingest.spark.functions", reason="the spark extra (pyspark) is not installed")

from ingest.stats import bootstrap, metric_estimates  # noqa: E402


def run_task(handler, batches, *arguments):
    """eval() per batch (scalar arguments arrive as arrays of the batch's length), then terminate()."""
    for batch in batches:
        scalars = [pa.array([value] * batch.num_rows) for value in arguments]
        assert list(handler.eval(batch, *scalars)) == []
    tables = list(handler.terminate())
    return pa.concat_tables(tables) if tables else None


def test_a_task_of_metric_sums_in_several_batches_gives_the_cohorts_statistics():
    rng = np.random.default_rng(9)
    n_cases = 23
    counts = rng.integers(0, 3, (n_cases, 4)).astype(float)
    sums = np.minimum(counts, rng.integers(0, 3, (n_cases, 4))).astype(float)
    case, cell = np.nonzero(counts)
    rows = pd.DataFrame({"cohort": "c", "cell_block": 0, "n_cases": n_cases, "cell_id": cell * 1000 + 7,
                         "case_index": case, "value_sum": sums[case, cell], "n_questions": counts[case, cell],
                         "n_valid": counts[case, cell] - 1})
    table = pa.Table.from_pandas(rows, preserve_index=False)
    batches = table.to_batches(max_chunksize=10)             # a task's rows arrive in several batches
    assert len(batches) > 2
    found = run_task(functions.MetricIntervals(), batches, 2026, 400, "bca", 0, 256).to_pandas()
    whole = bootstrap.cell_statistics(sums, counts, bootstrap.weights(2026, "c", n_cases, 400), method="bca")
    assert list(found["cell_id"]) == [7, 1007, 2007, 3007]
    for name in ["estimate", "ci_low", "ci_high", "se_clustered", "n_cases", "n_finite_replicates"]:
        assert np.array_equal(found[name].to_numpy(), whole[name], equal_nan=True), name
    assert list(found["n_valid"]) == list((counts - 1).sum(axis=0, where=counts > 0))
    # a memory of 1 MB draws 1 replicate at a time here ((1 MB / 40 bytes) / 23 cases > 400): same numbers
    small = run_task(functions.MetricIntervals(), batches, 2026, 400, "bca", 3, 1).to_pandas()
    pd.testing.assert_frame_equal(small, found, check_exact=True)


def test_a_task_without_rows_returns_nothing():
    assert run_task(functions.MetricIntervals(), [], 2026, 400, "percentile", 0, 256) is None


def test_frames_keep_an_empty_frames_columns_and_return_numbers_exactly(monkeypatch):
    """An empty relation arrives as one row of nulls (macros/frame_rows.sql): the function sees its
    columns and no row; NaN goes back as null, a double as itself."""
    seen = {}

    def probe(frames, parameters):
        seen.update({name: (list(frame.columns), len(frame)) for name, frame in frames.items()})
        return pd.DataFrame({"name": ["third", "none"], "value": [1 / 3, np.nan], "n": [parameters["n"], 0]})

    monkeypatch.setitem(functions.FRAME_FUNCTIONS, "probe", probe)
    rows = pa.table({"frame": ["full", "full", "empty"],
                     "payload": [json.dumps({"a": 1, "b": "x"}), json.dumps({"a": 2, "b": None}),
                                 json.dumps({"c": None, "d": None})]})
    out = run_task(functions.Frames(), rows.to_batches(max_chunksize=2), "probe", json.dumps({"n": 5}))
    assert seen == {"full": (["a", "b"], 2), "empty": (["c", "d"], 0)}
    records = [json.loads(p) for p in out.column("payload").to_pylist()]
    assert records == [{"name": "third", "value": 1 / 3, "n": 5}, {"name": "none", "value": None, "n": 0}]


def test_frames_name_an_unknown_function():
    rows = pa.table({"frame": ["x"], "payload": [json.dumps({"a": 1})]})
    with pytest.raises(ValueError, match="no frame function 'nope'; known: .*validation_agreement"):
        run_task(functions.Frames(), rows.to_batches(), "nope", "{}")


def test_block_estimates_are_the_per_case_sums_of_cells_no_matter_the_order_of_rows():
    rng = np.random.default_rng(2)
    cell, case = rng.integers(0, 5, 60), rng.integers(0, 11, 60)
    keep = ~pd.DataFrame({"a": cell, "b": case}).duplicated().to_numpy()
    cell, case = cell[keep], case[keep]
    values, questions = rng.integers(0, 3, len(cell)).astype(float), np.full(len(cell), 3.0)
    order = rng.permutation(len(cell))
    first = metric_estimates.block_estimates("o", 11, cell, case, values, questions, values, 200, 1, "studentized", 50)
    second = metric_estimates.block_estimates("o", 11, cell[order], case[order], values[order], questions[order],
                                              values[order], 200, 1, "studentized", 50)
    for name, value in first.items():
        assert np.array_equal(value, second[name], equal_nan=True), name


def test_a_killed_builds_folder_without_a_table_is_cleared_and_nothing_else(tmp_path):
    """recovery.clear_killed_build on a catalog as Spark lists it: a folder no table owns goes; the
    tables' folders, the schemas' folders and hidden staging folders stay."""
    from types import SimpleNamespace as Entry

    from ingest.spark import recovery

    warehouse = tmp_path / "warehouse"
    for folder in ["main.db/agg_metrics", "main.db/int_left_half_written", "main.db/.spark-staging-1", "main.db/_temporary",
                   "default_table"]:
        (warehouse / folder).mkdir(parents=True)
    catalog = Entry(
        listDatabases=lambda: [Entry(name="default", locationUri=f"file:{warehouse}"),
                               Entry(name="main", locationUri=f"file:{warehouse / 'main.db'}"),
                               Entry(name="remote", locationUri="s3a://bucket/remote.db")],
        listTables=lambda name: {"default": [Entry(name="default_table")], "main": [Entry(name="AGG_METRICS")]}[name])
    removed = recovery.clear_killed_build(Entry(catalog=catalog))
    assert removed == [warehouse / "main.db" / "int_left_half_written"]
    assert sorted(p.name for p in (warehouse / "main.db").iterdir()) == [".spark-staging-1", "_temporary", "agg_metrics"]
    assert (warehouse / "default_table").is_dir()


def test_a_models_replies_as_json_rows_parse_as_the_duckdb_model_parses_them():
    """hb_reply_parses through the table function (one task of one model's replies, packed as Spark's
    to_json packs them: nulls kept, integers as numbers) gives the rows the DuckDB model gives."""
    from ingest.stats.hb_steps import hb_reply_parses

    sketch = json.dumps([{"direction": "-", "mechanism_narrative": "m", "candidate_proxies": [], "regime_hint": "r"},
                         {"direction": "+", "mechanism_narrative": "m", "candidate_proxies": ["x"], "regime_hint": "r"}])
    base = {"model_key": "m1", "source": "runner", "decision_date": "2019-03-01", "call_id": 1, "finish_reason": "stop",
            "load_id": 4, "received_at": "2026-12-04T10:00:00"}
    replies = pd.DataFrame([
        {**base, "kind": "arm", "arm": "D", "replicate": 2, "sample": 0, "request_id": "a", "reply_text": sketch,
         "is_truncated": False, "probe_set": "protocol", "temperature": None},
        {**base, "kind": "arm", "arm": "M", "replicate": 1, "sample": 0, "request_id": "b", "reply_text": sketch[:40],
         "is_truncated": True, "probe_set": "protocol", "temperature": None},
        {**base, "kind": "rec", "arm": None, "replicate": None, "sample": 0, "request_id": "c",
         "reply_text": '{"estimated_date": "2019-02"}', "is_truncated": False, "probe_set": "protocol", "temperature": None},
        {**base, "kind": "lap", "arm": None, "replicate": None, "sample": 3, "request_id": "d", "reply_text": "Up.",
         "is_truncated": False, "probe_set": "lap_sensitivity", "temperature": 0.7},
    ])
    expected = hb_reply_parses({"replies": replies}, {})
    payloads = [json.dumps({k: (None if pd.isna(v) else v) for k, v in row.items()}) for row in replies.to_dict("records")]
    rows = pa.table({"frame": ["replies"] * len(payloads), "payload": payloads, "part": ["m1"] * len(payloads)})
    out = run_task(functions.Frames(), rows.to_batches(max_chunksize=3), "hb_reply_parses", "{}")
    found = pd.DataFrame([json.loads(p) for p in out.column("payload").to_pylist()]).astype(expected.dtypes.to_dict())
    # the same rows and the same model digest (input_fingerprint); each run stamps its own computed_at
    pd.testing.assert_frame_equal(found.drop(columns="computed_at"), expected.drop(columns="computed_at"))
    assert found["computed_at"].notna().all() and expected["input_fingerprint"].nunique() == 1
    assert list(expected["parse_status"]) == ["ok", "ok", "truncated", "truncated", "ok", "ok", "ok", "ok"]
    assert expected.loc[0, "directions"] == "-+" and expected.loc[4, "estimated_date"] == "2019-02"
    assert expected.loc[6, "lap_answer"] == "up"
