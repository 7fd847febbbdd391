"""`hindsight explore --static DIR`: a slice of the explorer as a folder that opens from file:// with
no server and no network, for a paper's supplement or a reviewer.

The pages are the explorer's own, rendered by the application and followed link by link from the
slice's metrics table: every cell's evidence (every page of it, in question order), every pair or
answer it lists. Links between them become relative file names; a link to a page outside the slice
(another build's view, a comparison, a case) loses its href and stays as text; the forms, filters and
downloads, which need the server, are left out. The folder holds the pages, the stylesheet and the
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
from ingest.explore.app import STATIC, STATIC_FILES, Explorer, link

FOLLOWED = ("/cell", "/pair", "/answer")
HREF = re.compile(r'href="([^"]*)"')
DEFAULT_MAX_PAGES = 5000


def canonical(url: str) -> str:
    """URL with its parameters in one order and the defaults left out: one file per page."""
    path, _, query = url.partition("?")
    params = sorted((k, v) for k, values in parse_qs(query, keep_blank_values=False).items() for v in values
                    if (k, v) not in (("page", "1"), ("sort", "question")))
    return link(path, **{k: [v for key, v in params if key == k] for k in dict.fromkeys(k for k, _ in params)})


def _file(url: str) -> str:
    return "index.html" if url.split("?")[0] == "/" else f"p-{hashlib.sha1(canonical(url).encode()).hexdigest()[:16]}.html"


def write_static(app: Explorer, out: Path, metrics: list[str], by: list[str], where: str | None,
                 max_pages: int = DEFAULT_MAX_PAGES) -> dict:
    """The slice's pages into OUT; returns what was written (pages, bytes)."""
    if out.exists() and any(out.iterdir()):
        raise InputError(out, "the folder is not empty", "name a new or empty folder for the static slice")
    start = canonical(link("/", metric=",".join(metrics), by=",".join(by), where=where))
    pages = _crawl(app, start, max_pages)
    out.mkdir(parents=True, exist_ok=True)
    (out / "static").mkdir()
    for name in STATIC_FILES:
        shutil.copyfile(STATIC / name, out / "static" / name)

    def rewrite(match: re.Match) -> str:
        target = html.unescape(match.group(1))
        if target.startswith("/static/"):
            return f'href="{target[1:]}"'
        if target.split("?")[0] == "/":
            return 'href="index.html"'
        if canonical(target) in pages:
            return f'href="{_file(target)}"'
        return 'data-offline="the server\'s view"'        # a page outside the slice: its text, no link

    for url, page in pages.items():
        page = re.sub(r"<form\b.*?</form>", "", page, flags=re.S)
        page = re.sub(r'<p class="downloads">.*?</p>', "", page, flags=re.S)
        page = HREF.sub(rewrite, page).replace('src="/static/', 'src="static/')
        (out / _file(url)).write_text(page, encoding="utf-8")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return {"pages": len(pages), "bytes": size, "index": out / "index.html"}


def _crawl(app: Explorer, start: str, max_pages: int) -> dict[str, str]:
    """The slice's pages by canonical URL: the metrics table, its cells' evidence (every page), the
    pairs and answers those list; a pair's own links (other conditions, models) are not followed."""
    queue, pages = deque([start]), {}
    while queue:
        url = queue.popleft()
        if url in pages:
            continue
        status, _, body = app.get(url)
        page = body.decode()
        if status != 200:
            if url == start:
                reason = re.search(r"data-reason>(.*?)</p>", page, re.S)
                raise InputError("--static", html.unescape(reason.group(1)) if reason else f"HTTP {status}",
                                 "give the slice as `hindsight metrics` takes it")
            continue
        pages[url] = page
        here = url.split("?")[0]
        follows = FOLLOWED if here in ("/", "/cell") else ()
        for target in (html.unescape(t) for t in HREF.findall(page)):
            path = target.split("?")[0]
            if path in follows and (here == "/cell" or path == "/cell"):
                target = canonical(target)
                if target not in pages and target not in queue:
                    if len(pages) + len(queue) >= max_pages:
                        raise InputError("--static", f"the slice has more than {max_pages} pages",
                                         "narrow it with --where (one model and condition, say) or raise --max-pages")
                    queue.append(target)
    return pages
