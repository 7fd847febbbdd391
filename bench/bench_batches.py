"""Benchmark of batch collection against the loopback OpenAI Files/Batches and Anthropic Message
Batches endpoints: submit N calls with `--batch` (chunked within the provider's limits), then
collect them (poll, download, store through the runner's write path), timed apart.

    .venv/bin/python bench/bench_batches.py --calls 50000
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
from pathlib import Path

from ingest.db import connect
from ingest.llm.answer import answer_requests
from ingest.llm.batch import BatchOptions, collect_all
from ingest.llm.batch_writers import writers_for
from ingest.llm.profiles import Overrides

PROJECT = Path(__file__).resolve().parents[1]


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# the loopback server lives with the tests; the benchmark corpus is the runner benchmark's
FakeLLMServer = _module("fake_llm_server", PROJECT / "tests" / "python" / "fake_llm_server.py").FakeLLMServer
warehouse = _module("bench_runner", PROJECT / "bench" / "bench_runner.py").warehouse


def run(provider: str, calls: int, samples: int) -> dict:
    db = warehouse()
    os.environ.setdefault("OPENAI_API_KEY", "bench-key")
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench-key")
    model = "openai:bench-batch" if provider == "openai" else "anthropic:bench-batch"
    with FakeLLMServer() as server, connect(db) as con:
        url = server.url + "/v1" if provider == "openai" else server.url
        overrides = Overrides(samples=samples, batch=BatchOptions())
        started = time.perf_counter()
        submitted = answer_requests(con, model, url, limit=calls // samples, overrides=overrides)
        submit_seconds = time.perf_counter() - started
        started = time.perf_counter()           # poll until every batch has ended and is stored
        polls, still_open = 1, collect_all(con, writers_for)[1]
        while still_open:
            polls, still_open = polls + 1, collect_all(con, writers_for)[1]
        collect_seconds = time.perf_counter() - started
        stored = con.execute("select count(*) from raw.llm_calls where model = ?", [model]).fetchone()[0]
        batches = con.execute("select count(*), max(n_requests), max(input_bytes) from raw.batches").fetchone()
        started = time.perf_counter()
        rerun = answer_requests(con, model, url, limit=calls // samples, overrides=overrides)
        rerun_seconds = time.perf_counter() - started
    return {"provider": provider, "calls": submitted.selected, "submitted": submitted.submitted,
            "batches": batches[0], "largest_batch_requests": batches[1], "largest_batch_mb": round(batches[2] / 2**20, 1),
            "submit_seconds": round(submit_seconds, 1), "collect_seconds": round(collect_seconds, 1), "collect_polls": polls,
            "stored": stored, "still_open": len(still_open), "rerun_seconds": round(rerun_seconds, 1),
            "rerun_submitted": rerun.submitted}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=50_000)
    parser.add_argument("--samples", type=int, default=5, help="calls per request (the bench corpus has 10,000 requests)")
    parser.add_argument("--provider", choices=["openai", "anthropic", "both"], default="both")
    args = parser.parse_args()
    figures = [run(p, args.calls, args.samples) for p in (["openai", "anthropic"] if args.provider == "both" else [args.provider])]
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "batches.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
