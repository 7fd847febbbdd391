"""`hindsight explore --static DIR`: a slice of the explorer as a folder that opens from file:// with
no server and no network, for a paper's supplement or a reviewer.

The pages are the explorer's own, rendered by the application and followed link by link from the
slice's metrics table: every cell's evidence (every page of it, in question order), every pair or
answer it lists. Links between them become relative file names; a link to a page outside the slice
(another build's view, a comparison, a case) becomes plain text, styled as text; the forms, filters and
downloads, which need the server, are left out. Every page carries the server's Content-Security-Policy
as a <meta>. The folder holds the pages, the stylesheet and the
script, and nothing is loaded from anywhere else.
"""
from __future__ import annotations

import hashlib
import html
import re
import shutil
from collections import deque
from pathlib import Path
from urllib.parse import parse_qs

from ingest.errors import InputError
from ingest.explore.app import CSP, STATIC, STATIC_FILES, Explorer, link
from ingest.explore.evidence import PAGE
from ingest.publish.slices import COLUMNS as SLICE_COLUMNS

FOLLOWED = ("/cell", "/pair", "/answer")
HREF = re.compile(r'href="([^"]*)"')
ANCHOR = re.compile(r"<a\b([^>]*)>(.*?)</a>", re.S)
DEFAULT_MAX_PAGES = 500
# the server's policy for a folder read from file:// ('self' is the folder's own files)
STATIC_CSP = CSP.replace("; frame-ancestors 'none'", "")


def canonical(url: str) -> str:
    """URL with its parameters in one order and the defaults left out: one file per page. A page's
    `back` (the cell it was opened from) names no other page: a pair is one file, whichever cell
    links to it, and the first cell's back link is the one it keeps."""
    path, _, query = url.partition("?")
    params = sorted((k, v) for k, values in parse_qs(query, keep_blank_values=False).items() for v in values
                    if (k, v) not in (("page", "1"), ("sort", "question")) and k != "back")
    return link(path, **{k: [v for key, v in params if key == k] for k in dict.fromkeys(k for k, _ in params)})


def _file(url: str) -> str:
    return "index.html" if url.split("?")[0] == "/" else f"p-{hashlib.sha1(canonical(url).encode()).hexdigest()[:16]}.html"


# what a page of each kind weighs, measured on the demo's slices (docs/explore.md): the estimate a
# slice states before it is written
PAGE_BYTES = {"cell": 40_000, "item": 22_000}
PAGES_PER_SECOND = 11


def estimate(app: Explorer, metrics: list[str], by: list[str], where: str | None) -> dict:
    """The size of a slice before it is written, from its metrics table alone: a page per 50 samples of
    each cell, a page per sample (a pair or an answer; cells of several metrics share theirs)."""
    pinned = app.marts.now()
    frame = app._sliced(pinned, metrics, by, where)
    keys = [c for c in frame.columns if c not in SLICE_COLUMNS and c != "metric"]
    samples = frame.fillna({"n_answers": 0})
    cell_pages = int(sum(max(1, -(-int(n) // PAGE)) for n in samples["n_answers"]))
    items = int(samples.groupby(keys, dropna=False)["n_answers"].max().sum()) if keys else int(samples["n_answers"].max())
    pages = 1 + cell_pages + items
    size = cell_pages * PAGE_BYTES["cell"] + items * PAGE_BYTES["item"]
    return {"pages": pages, "bytes": size, "seconds": pages / PAGES_PER_SECOND, "cells": len(frame)}


def check_folder(out: Path) -> None:
    if out.exists() and any(out.iterdir()):
        raise InputError(out, "the folder is not empty", "name a new or empty folder for the static slice")


def write_static(app: Explorer, out: Path, metrics: list[str], by: list[str], where: str | None,
                 max_pages: int = DEFAULT_MAX_PAGES) -> dict:
    """The slice's pages into OUT; returns what was written (pages, bytes)."""
    check_folder(out)
    start = canonical(link("/", metric=",".join(metrics), by=",".join(by), where=where))
    pages = _crawl(app, start, max_pages)
    out.mkdir(parents=True, exist_ok=True)
    (out / "static").mkdir()
    for name in STATIC_FILES:
        shutil.copyfile(STATIC / name, out / "static" / name)

    def rewrite(match: re.Match) -> str:
        attributes, text = match.group(1), match.group(2)
        found = HREF.search(attributes)
        if found is None:
            return match.group(0)
        target = html.unescape(found.group(1))
        if target.startswith("/static/"):
            return match.group(0).replace(found.group(0), f'href="{target[1:]}"')
        if target.split("?")[0] == "/":
            return match.group(0).replace(found.group(0), 'href="index.html"')
        if canonical(target) in pages:
            return match.group(0).replace(found.group(0), f'href="{_file(target)}"')
        # a page outside the slice: its text, not dressed as a link
        return f'<span class="offline" title="not in this static slice: open it in hindsight explore">{text}</span>'

    for url, page in pages.items():
        page = re.sub(r"<form\b.*?</form>", "", page, flags=re.S)
        page = re.sub(r'<p class="downloads">.*?</p>', "", page, flags=re.S)
        page = ANCHOR.sub(rewrite, page).replace('src="/static/', 'src="static/').replace('href="/static/', 'href="static/')
        # no server sends the header here: the same policy as a <meta> (frame-ancestors is the header's alone)
        page = page.replace("<head>\n", f'<head>\n<meta http-equiv="Content-Security-Policy" content="{STATIC_CSP}">\n', 1)
        (out / _file(url)).write_text(page, encoding="utf-8")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return {"pages": len(pages), "bytes": size, "index": out / "index.html"}


def _crawl(app: Explorer, start: str, max_pages: int) -> dict[str, str]:
    """The slice's pages by canonical URL: the metrics table, its cells' evidence (every page), the
    pairs and answers those list; a pair's own links (other conditions, models) are not followed, but
    work where they lead to a page of the slice."""
    queue, queued, pages = deque([(start, start)]), {start}, {}
    while queue:
        key, url = queue.popleft()
        status, _, body = app.get(url)
        page = body.decode()
        if status != 200:
            if url == start:
                reason = re.search(r"data-reason>(.*?)</p>", page, re.S)
                raise InputError("--static", html.unescape(reason.group(1)) if reason else f"HTTP {status}",
                                 "give the slice as `hindsight metrics` takes it")
            continue
        pages[key] = page
        here = url.split("?")[0]
        follows = FOLLOWED if here in ("/", "/cell") else ()
        for target in (html.unescape(t) for t in HREF.findall(page)):
            path = target.split("?")[0]
            if path in follows and (here == "/cell" or path == "/cell"):
                named = canonical(target)
                if named not in queued:
                    if len(queued) >= max_pages:
                        raise InputError("--static", f"the slice has more than {max_pages} pages",
                                         "narrow it with --where (one model and condition, say) or raise --max-pages")
                    queued.add(named)
                    queue.append((named, target))     # fetched as linked: a pair keeps its way back to the cell
    return pages
