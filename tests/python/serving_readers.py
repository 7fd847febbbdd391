"""A reader of the serving file, as BI tools and notebooks are (run as a process by test_serving.py).

    python serving_readers.py per-query SERVE OUT STOP [PAUSE]   # a connection per query, as Superset opens them
    python serving_readers.py pooled SERVE OUT STOP [PAUSE]      # one SQLAlchemy QueuePool connection held throughout
    python serving_readers.py slow SERVE OUT SECONDS             # one query that takes SECONDS

Each query's start, end, result or error is one JSON line of OUT; the loops end when the file STOP
exists, and pause PAUSE seconds between queries (default 0.05).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import duckdb

# single-mart reads a dashboard makes: each result must be one published build's
QUERIES = {
    "build": "select dbt_invocation_id from dim_build",
    "metrics": "select count(*), sum(hash(model, cohort, condition, metric, estimate)) from agg_metrics",
    "answers": "select count(*), count(distinct model) from fct_answers",
}
PAUSE = 0.05        # a dashboard refreshing a few times a second


def record(out, name: str, started: float, result=None, error: str | None = None) -> None:
    out.write(json.dumps({"query": name, "started": started, "ended": time.time(),
                          "result": [list(r) for r in result] if result is not None else None, "error": error}) + "\n")
    out.flush()


def per_query(serve: str, out, stop: Path, pause: float = PAUSE) -> None:
    while not stop.exists():
        for name, sql in QUERIES.items():
            started = time.time()
            try:
                with duckdb.connect(serve, read_only=True) as con:
                    record(out, name, started, con.execute(sql).fetchall())
            except duckdb.Error as error:
                record(out, name, started, error=str(error))
            time.sleep(pause)


def pooled(serve: str, out, stop: Path, pause: float = PAUSE) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import QueuePool

    engine = create_engine(f"duckdb:///{serve}", connect_args={"read_only": True}, poolclass=QueuePool, pool_size=1)
    with engine.connect() as connection:
        while not stop.exists():
            for name, sql in QUERIES.items():
                started = time.time()
                try:
                    record(out, name, started, connection.execute(text(sql)).fetchall())
                except Exception as error:      # noqa: BLE001 - any failure is what the test counts
                    record(out, name, started, error=str(error))
                time.sleep(pause)


def slow(serve: str, out, seconds: float) -> None:
    """One query over agg_metrics that takes SECONDS: a UDF sleeps on each of its rows."""
    con = duckdb.connect(serve, read_only=True)
    rows = con.execute("select count(*) from agg_metrics").fetchall()[0][0]

    def pace(value: int) -> int:
        time.sleep(seconds / rows)
        return value

    con.create_function("pace", pace, ["UBIGINT"], "UBIGINT", side_effects=True)
    print("ready", flush=True)
    sys.stdin.readline()
    started = time.time()
    try:
        record(out, "metrics", started, con.execute(
            "select count(*), sum(pace(hash(model, cohort, condition, metric, estimate))) from agg_metrics").fetchall())
    except duckdb.Error as error:
        record(out, "metrics", started, error=str(error))


if __name__ == "__main__":
    kind, serve, out_path, arg, *pause = sys.argv[1:]
    with open(out_path, "a") as out:
        if kind == "slow":
            slow(serve, out, float(arg))
        else:
            {"per-query": per_query, "pooled": pooled}[kind](serve, out, Path(arg), *map(float, pause))
