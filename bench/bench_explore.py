"""The explorer's server time per view: a scripted tour of `hindsight explore`, each view asked
REPEATS times of the WSGI application in this process (what its Server-Timing header reports, without
the network), p50 and p95 per view, and the process's peak resident memory.

The tour: the metrics of a three-dimension slice, its largest cell's evidence, its last page, a pair,
the cases' influence on the cell, the audit rows, one row's cells by date, a date's replies and one reply
with its request, a comparison of two models, the questions behind a comparison's cell, and an export
of the cell's samples (CSV, Parquet).

    .venv/bin/python bench/bench_explore.py                         # on a fresh demo
    .venv/bin/python bench/bench_explore.py --warehouse PATH        # on any built warehouse (100x: bench_serving's)
"""
from __future__ import annotations

import argparse
import html
import re
import resource
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
from bench_metrics import child, write_results

from ingest.explore.app import Explorer

REPEATS = 20


def ask(app, url: str) -> tuple[int, str | bytes, float]:
    started = time.perf_counter()
    status, headers, body = app.get(url)
    seconds = time.perf_counter() - started
    text = body.decode() if headers["Content-Type"].startswith("text/html") else body
    if status != 200:
        sys.exit(f"{url}: HTTP {status}: {text[-500:] if isinstance(text, str) else ''}")
    return status, text, seconds


def first_link(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    if not found:
        sys.exit(f"no link matching {pattern}")
    return html.unescape(found.group(1))


def tour(app) -> dict[str, str]:
    """The views' URLs, found by following the pages' own links."""
    models = [r[0] for r in app.marts.now().cursor().execute(
        "select model from fct_metric_parts group by model order by count(*) desc, model limit 2").fetchall()]
    views = {"metrics (3 dimensions)": "/?" + urlencode({"metric": "delta_htr,acc", "by": "model,condition,relpos_band"})}
    _, text, _ = ask(app, views["metrics (3 dimensions)"])
    # the cell with the most question rows (the one with most pages to page through)
    cells = re.findall(r'data-n-questions="(\d+)">.*?href="(/cell\?[^"]*)" data-evidence', text, re.S)
    if not cells:
        sys.exit("the metrics view lists no cell")
    views["a cell's evidence"] = html.unescape(max(cells, key=lambda c: int(c[0]))[1])
    _, text, _ = ask(app, views["a cell's evidence"])
    last = re.search(r'href="([^"]*)" data-page="last"', text)
    views["its last page"] = html.unescape(last.group(1)) if last else views["a cell's evidence"]
    views["a pair"] = first_link(text, r'href="(/(?:pair|answer)\?[^"]*)" data-open')
    views["the cases' influence on the cell"] = first_link(text, r'href="([^"]*)" data-cases')
    _, text, _ = ask(app, "/hb")
    views["the audit rows"] = "/hb"
    row = re.search(r'href="(/hb/row\?[^"]*)" data-row', text)
    if row:                              # (a generated warehouse at scale has no audit rows)
        views["an audit row and its cells by date"] = html.unescape(row.group(1))
        _, text, _ = ask(app, views["an audit row and its cells by date"])
        date = re.search(r'href="(/hb/cell\?[^"]*)" data-date-link', text)
        if date:
            views["an audit date's replies"] = html.unescape(date.group(1))
            _, text, _ = ask(app, views["an audit date's replies"])
            views["a reply with its request"] = first_link(text, r'href="(/hb/reply\?[^"]*)" data-reply')
    views["a comparison of two models"] = "/compare?" + urlencode(
        {"metric": "delta_htr", "by": "condition", "compare": f"model={models[0]},{models[1]}"})
    _, text, _ = ask(app, views["a comparison of two models"])
    views["where the two differ"] = first_link(text, r'href="(/compare/questions\?[^"]*)" data-questions')
    views["export of the cell (CSV)"] = views["a cell's evidence"].replace("/cell?", "/cell.csv?", 1)
    views["export of the cell (Parquet)"] = views["a cell's evidence"].replace("/cell?", "/cell.parquet?", 1)
    return views


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warehouse", type=Path, help="a built warehouse (default: a fresh demo)")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args()
    db = args.warehouse
    if db is None:
        db = Path(tempfile.mkdtemp(prefix="hindsight-explore-")) / "warehouse.duckdb"
        child(db, [sys.executable, "-m", "ingest.cli", "demo", "--report-dir", str(db.parent / "report")])
    views = tour(Explorer(db))
    # cold: a new explorer's first visit of each view, in the tour's order (the snapshot's database
    # made, no slice remembered yet); then each view again REPEATS times (a slice the snapshot has
    # made once is remembered: its repeats are warm)
    app = Explorer(db)
    cold = {name: ask(app, url)[2] for name, url in views.items()}
    figures = {"warehouse": str(db), "repeats": args.repeats, "views": {}}
    for name, url in views.items():
        seconds = [ask(app, url)[2] for _ in range(args.repeats)]
        figures["views"][name] = {"cold_ms": round(cold[name] * 1000, 1), "p50_ms": round(float(np.percentile(seconds, 50)) * 1000, 1),
                                  "p95_ms": round(float(np.percentile(seconds, 95)) * 1000, 1), "url": url}
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    write_results("explore.json", figures)


if __name__ == "__main__":
    main()
