"""The project's Python table functions on Spark: the estimators DuckDB's Python models run, run on
the executors, called from the Spark models' SQL (Spark 4's Arrow UDTFs with a TABLE argument).

- `hindsight_metric_intervals(TABLE(sums) PARTITION BY (cohort, cell_block), seed, replicates,
  ci_method, replicates_per_block, memory_mb)`: one task per block of cells of a cohort; it receives those cells'
  per-case sums, draws its replicates again from the counter-based draws, a block at a time, and
  returns each cell's estimate and interval (ingest/stats/metric_estimates.block_estimates). What
  crosses the network is per-case sums in and a few numbers per cell out: no relation anywhere has
  cells x cases x replicates rows.
- `hindsight_frames(TABLE(rows) WITH SINGLE PARTITION | PARTITION BY part, function, parameters)`:
  a function of DataFrames (FRAME_FUNCTIONS: Table G.1 and HindsightBench's steps,
  ingest/stats/hb_steps.py) over small tables, packed as (frame, JSON row) and unpacked here, in one
  task or one task per value of `part`; its rows come back as JSON, which the model reads with
  from_json and its declared columns (macros/frame_rows.sql).

Spark keeps Python functions in a session, not in its catalog: `hindsight build --target spark`
registers these in the session dbt builds with (ingest/spark/dbt_on_spark.py), and the models'
on-run-start check (macros/landing.sql) tells a plain `dbt build --target spark` to use it.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql.functions import arrow_udtf

from ingest.stats.hb_steps import STEPS
from ingest.stats.metric_estimates import block_estimates
from ingest.stats.validation_agreement import agreement_table

METRIC_INTERVALS = "hindsight_metric_intervals"
FRAMES = "hindsight_frames"


def _scalar(argument: pa.Array):
    """A scalar argument of an Arrow UDTF, which arrives as an array of the batch's length."""
    return argument[0].as_py()


class MetricIntervals:
    """One task: the per-case sums (cohort, n_cases, cell_id, case_index, value_sum, n_questions, n_valid) of
    one block of cells of one cohort, gathered over the task's batches; the statistics at its end."""

    def __init__(self):
        self.batches: list[pa.RecordBatch] = []
        self.parameters = None

    def eval(self, batch: pa.RecordBatch, seed, replicates, method, replicates_per_block, memory_mb):
        self.batches.append(batch.select(["cohort", "n_cases", "cell_id", "case_index", "value_sum", "n_questions", "n_valid"]))
        self.parameters = [_scalar(a) for a in (seed, replicates, method, replicates_per_block, memory_mb)]
        return iter(())

    def terminate(self):
        if not self.batches:
            return
        sums = pa.Table.from_batches(self.batches)
        seed, replicates, method, replicates_per_block, memory_mb = self.parameters
        n_cases = int(sums.column("n_cases")[0].as_py())
        # a block of draws and its temporaries: about 5 int64 arrays of (replicates x cases)
        block = int(replicates_per_block) or int(memory_mb) * 2**20 // (40 * max(n_cases, 1))
        number = lambda name: sums.column(name).to_numpy()       # noqa: E731  (the model casts the sums to double)
        yield pa.table(block_estimates(
            sums.column("cohort")[0].as_py(), n_cases, number("cell_id"), number("case_index"), number("value_sum"),
            number("n_questions"), number("n_valid"), int(replicates), int(seed), str(method),
            max(1, min(block, int(replicates)))))


METRIC_COLUMNS = ("cell_id bigint, estimate double, ci_low double, ci_high double, se_clustered double, "
                  "n_questions double, n_cases bigint, n_valid double, n_finite_replicates bigint")


def validation_agreement(frames: dict[str, pd.DataFrame], parameters: dict) -> pd.DataFrame:
    """Table G.1 (ingest/stats/validation_agreement.py) with the warehouse's draws, the ones every
    engine can draw."""
    return agreement_table(frames["cases"], frames["annotations"], frames["judged"],
                           int(parameters["bootstrap_replicates"]), int(parameters["bootstrap_seed"]), draws="warehouse")


FRAME_FUNCTIONS = {"validation_agreement": validation_agreement, **STEPS}


def _json_value(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)        # repr: the double itself
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value


class Frames:
    """One task: the rows of the frames one function reads (column `frame`: its name; `payload`: the
    row as JSON), gathered, then the function's rows as JSON."""

    def __init__(self):
        self.batches: list[pa.RecordBatch] = []
        self.call = None

    def eval(self, batch: pa.RecordBatch, function, parameters):
        self.batches.append(batch.select(["frame", "payload"]))
        self.call = (_scalar(function), json.loads(_scalar(parameters)))
        return iter(())

    def terminate(self):
        if not self.batches:
            return
        name, parameters = self.call
        if name not in FRAME_FUNCTIONS:
            raise ValueError(f"{FRAMES}: no frame function {name!r}; known: {', '.join(sorted(FRAME_FUNCTIONS))}")
        rows = pa.Table.from_batches(self.batches).to_pydict()
        packed: dict[str, list] = {}
        for frame, payload in zip(rows["frame"], rows["payload"]):
            packed.setdefault(frame, []).append(json.loads(payload))
        frames = {frame: pd.DataFrame(records) for frame, records in packed.items()}
        # a frame with no rows still has its columns: an empty marker row names them (frame_rows)
        frames = {frame: table.dropna(how="all").reset_index(drop=True) for frame, table in frames.items()}
        out = FRAME_FUNCTIONS[name](frames, parameters)
        payloads = [json.dumps({k: _json_value(v) for k, v in record.items()}) for record in out.to_dict("records")]
        yield pa.table({"payload": pa.array(payloads, type=pa.string())})


def register(spark) -> None:
    """Register the table functions in SPARK's session (classic or Spark Connect)."""
    spark.udtf.register(METRIC_INTERVALS, arrow_udtf(MetricIntervals, returnType=METRIC_COLUMNS))
    spark.udtf.register(FRAMES, arrow_udtf(Frames, returnType="payload string"))
