"""What the runs' store says while runs go on: each run live (calls done and planned, calls per
minute, time left, failures, tokens and cost so far), finished and crashed runs, and how many calls
no build has brought in yet (`hindsight status`); and the store's raw tables as a DuckDB reader
sees them (`hindsight batches`).

A run is crashed when it still says running but has not beaten for three of its heartbeats (or its
process is gone, on this machine): its claims have expired, and the next run resumes its calls.
"""
from __future__ import annotations

import csv
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow as pa

from ingest.collect import store
from ingest.collect.connection import add_seeds
from ingest.config import PROJECT_DIR
from ingest.db import duckdb_settings


def prices() -> dict[str, tuple[float, float]]:
    """USD per million input and output tokens, by model (seeds/model_prices.csv, as the ledger's cost)."""
    path = PROJECT_DIR / "seeds" / "model_prices.csv"
    if not path.exists():
        return {}
    with path.open(newline="") as handle:
        return {row["model"]: (float(row["input_usd_per_million_tokens"]), float(row["output_usd_per_million_tokens"]))
                for row in csv.DictReader(handle)}


def state_of(row: dict, now: datetime) -> str:
    if row["state"] != "running":
        return row["state"]
    stale = (now - row["heartbeat_at"]).total_seconds() > 3 * store.claim_seconds() / 4 + 5
    gone = row["host"] == store.HOST and not store._alive(row["pid"])
    return "crashed" if stale or gone else "running"


def runs(warehouse: Path) -> list[dict]:
    """Every run the store knows, newest first, with its state read live and its rates."""
    with store.reading(warehouse) as raw:
        if raw is None:
            return []
        cursor = raw.execute("select * from runs order by started_at desc")
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, row)) for row in cursor.fetchall()]
    now, priced = datetime.now(timezone.utc).replace(tzinfo=None), prices()
    for row in rows:
        row["state"] = state_of(row, now)
        end = row["finished_at"] if row["state"] not in ("running",) and row["finished_at"] else \
            (row["heartbeat_at"] if row["state"] == "crashed" else now)
        minutes = max((end - row["started_at"]).total_seconds() / 60, 1e-9)
        row["per_minute"] = (row["done"] + row["failed"]) / minutes
        left = max(row["planned"] - row["done"] - row["failed"], 0)
        row["minutes_left"] = left / row["per_minute"] if row["state"] == "running" and row["per_minute"] > 0 else None
        price = priced.get(row["model"])
        row["cost"] = (0.0 if (row["model"] or "").startswith("sim:") else
                       None if price is None else (row["input_tokens"] * price[0] + row["output_tokens"] * price[1]) / 1e6)
    return rows


def run_lines(warehouse: Path, limit: int = 20) -> list[str]:
    found = runs(warehouse)
    if not found:
        return ["runs: none yet (`hindsight answer`, `judge`, `generate`, `audit run` record theirs in "
                f"{store.store_path(warehouse)})"]
    header = ["run", "command", "model", "state", "started", "done/planned", "per min", "left", "failed", "tokens in/out", "cost"]
    cells = [header]
    for row in found[:limit]:
        left = "" if row["minutes_left"] is None else f"{row['minutes_left']:.1f} min"
        cost = "no price" if row["cost"] is None else f"${row['cost']:.4f}"
        cells.append([row["run_id"][:8], row["command"], row["label"] or row["model"], row["state"],
                      row["started_at"].strftime("%Y-%m-%d %H:%M:%S"), f"{row['done']}/{row['planned']}",
                      f"{row['per_minute']:.1f}", left, str(row["failed"]), f"{row['input_tokens']}/{row['output_tokens']}", cost])
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["runs (live from the runs' store; a crashed run's calls are resumed by the next run):"]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(2, "  " + "  ".join("-" * w for w in widths))
    if len(found) > limit:
        lines.append(f"  … and {len(found) - limit} older runs")
    return lines


def store_view(warehouse: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB whose raw schema holds the store's tables as they are now, and the seeds
    as reference.* (what `hindsight batches` lists reads, while runs write the store)."""
    con = duckdb.connect(":memory:", config=duckdb_settings())
    con.execute("create schema raw")
    add_seeds(con)
    columns = store.raw_columns()
    with store.reading(warehouse) as raw:
        for table, described in columns.items():
            names = [name for name, _ in described]
            rows = raw.execute(f"select {', '.join(names)} from raw_{table}").fetchall() if raw is not None else []
            data = pa.table({name: pa.array([row[i] for row in rows]) for i, name in enumerate(names)}) if rows else None
            body = ", ".join(f'"{name}" {kind}' for name, kind in described)
            con.execute(f"create table raw.{table} ({body})")
            if data is not None:
                con.register("incoming", data)
                con.execute(f"insert into raw.{table} select * from incoming")
                con.unregister("incoming")
    return con
