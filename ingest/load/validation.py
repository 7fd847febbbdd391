"""Great Expectations suites that raw inputs pass before dbt sees them.

GX's DuckDB path through SQLAlchemy is broken upstream, so every suite runs on
a pandas DataFrame with GX's pandas data source. `critical` expectations
reject whole files (TTS) or rows (questions, responses); `warning`
expectations are recorded for `hindsight status` and never block a load.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
os.environ.setdefault("TQDM_DISABLE", "1")

import pandas as pd  # noqa: E402

from ingest.db import insert_rows  # noqa: E402

PLAIN_NUMBER = r"^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*$"


@dataclass
class Check:
    expectation: str          # GX expectation class name
    kwargs: dict
    severity: str             # critical | warning
    message: str              # what a failure means, for the user
    fix: str


@dataclass
class Outcome:
    check: Check
    success: bool
    unexpected_index: list[int]
    unexpected_count: int
    element_count: int


TTS_FILE_CHECKS = [
    Check("ExpectColumnValuesToBeInSet", {"column": "has_required_fields", "value_set": [True]},
          "critical", "required fields missing",
          "give a .csv an `event,time` header line and JSON elements `event` and `time` keys"),
    Check("ExpectColumnValuesToBeBetween", {"column": "n_records", "min_value": 1},
          "critical", "file holds no records", "remove the empty file or fill it"),
    Check("ExpectColumnValuesToBeBetween", {"column": "n_numeric_time", "min_value": 1},
          "critical", "time column is not a number in any record",
          "write times as plain numbers of hours relative to admission"),
]

TTS_RECORD_CHECKS = [
    Check("ExpectColumnValuesToMatchRegex", {"column": "time_text", "regex": PLAIN_NUMBER, "mostly": 0.95},
          "warning", "more than 5% of times are not plain numbers", "see quarantined rows in agg_tts_quality"),
    Check("ExpectColumnValuesToNotBeNull", {"column": "event_text", "mostly": 0.95},
          "warning", "more than 5% of records have no event", "see quarantined rows in agg_tts_quality"),
]


@lru_cache(maxsize=1)
def _context():
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return context, context.data_sources.add_pandas("hindsight_raw")


_assets: dict[str, object] = {}


def run_checks(name: str, frame: pd.DataFrame, checks: list[Check]) -> list[Outcome]:
    """Validate `frame` against `checks` with GX; return one outcome per check."""
    import great_expectations as gx

    if frame.empty:
        return [Outcome(c, True, [], 0, 0) for c in checks]
    context, source = _context()
    if name not in _assets:
        asset = source.add_dataframe_asset(name=name)
        _assets[name] = asset.add_batch_definition_whole_dataframe(f"{name}_whole")
    suite = gx.ExpectationSuite(name=f"{name}_{len(_assets)}_{id(frame)}")
    for check in checks:
        suite.add_expectation(getattr(gx.expectations, check.expectation)(**check.kwargs))
    batch = _assets[name].get_batch(batch_parameters={"dataframe": frame.reset_index(drop=True)})
    result = batch.validate(suite, result_format="COMPLETE")
    outcomes = []
    for check, item in zip(checks, result.results):
        details = item.result or {}
        outcomes.append(Outcome(
            check=check,
            success=bool(item.success),
            unexpected_index=list(details.get("unexpected_index_list") or []),
            unexpected_count=int(details.get("unexpected_count") or 0),
            element_count=int(details.get("element_count") or len(frame)),
        ))
    return outcomes


def outcome_rows(load_id: int, kind: str, suite: str, outcomes: list[Outcome]) -> list[tuple]:
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    return [
        (load_id, kind, suite, o.check.expectation, o.check.kwargs.get("column"), o.check.severity,
         o.success, o.unexpected_count, o.element_count,
         json.dumps({"message": o.check.message, "fix": o.check.fix, "kwargs": o.check.kwargs}), now)
        for o in outcomes
    ]


def insert_outcomes(con, rows: list[tuple]) -> None:
    if rows:
        insert_rows(con, "raw.validations", rows)
