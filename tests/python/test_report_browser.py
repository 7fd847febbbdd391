"""The demo's HTML report opened from disk in headless Chromium (Debian's
`chromium`, which .ci/run installs): every section and figure is there, every
image loads, the console stays clean, and a screenshot is saved.

The test starts Chromium itself with the flags this closed network needs and
a fresh profile, then drives it over the DevTools protocol with Playwright.
Without a Chromium binary the test is skipped, unless HINDSIGHT_REQUIRE_BROWSER
is set (as .ci/run does), where a missing browser is a failure.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ingest.publish.report import KINDS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SECTIONS = ["overview", "per-model", "cross-model", "prompt-variants", "cutoff-positions", "breakdowns",
            "data-quality", "human-validation", "hindsightbench", "provenance"]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic", "--remote-debugging-port=0",
         "--window-size=1280,1000",
         # a name that resolves to loopback, as a DNS rebinding makes one (the explorer's tour: its Host refusal)
         "--host-resolver-rules=MAP rebind.test 127.0.0.1"]


def chromium_binary() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        message = "chromium is not installed (apt-get install -y chromium; .ci/run does)"
        if os.environ.get("HINDSIGHT_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    process = subprocess.Popen([chromium_binary(), *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 60
    while not (port_file.exists() and port_file.read_text().strip()) and process.poll() is None:
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if not port_file.exists():
        process.kill()
        pytest.fail(f"chromium did not start (exit code {process.poll()})")
    port = port_file.read_text().splitlines()[0]
    with sync_playwright() as playwright:
        connected = playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        try:
            yield connected
        finally:
            connected.close()
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def inspect(browser, index: Path, screenshot: Path | None = None) -> dict:
    """Open the report from disk; what the page holds and what went wrong while loading it."""
    context = browser.contexts[0] if browser.contexts else browser.new_context()
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type in ("error", "assert") else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", lambda request: problems.append(f"failed load: {request.url} ({request.failure})"))
    page.goto(index.resolve().as_uri(), wait_until="load")
    page.wait_for_load_state("networkidle")
    found = page.evaluate("""() => ({
        sections: Array.from(document.querySelectorAll('[data-section]')).map(e => e.id),
        kinds: Array.from(document.querySelectorAll('[data-kind]')).map(e => e.dataset.kind),
        figures: document.querySelectorAll('figure img').length,
        broken: Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
        empty: Array.from(document.querySelectorAll('.empty')).map(e => e.textContent),
        scripts: document.scripts.length,
        // every table fits the page, or sits in a box that scrolls sideways (nothing hidden past the edge)
        tables: Array.from(document.querySelectorAll('table')).map(t => {
            const box = t.closest('.scroll');
            const page = document.documentElement.clientWidth;
            return {kind: t.closest('[data-kind]') ? t.closest('[data-kind]').dataset.kind : 'footer',
                    fits: t.getBoundingClientRect().right <= page + 1,
                    scrolls: !!box && ['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
                             && box.getBoundingClientRect().right <= page + 1};
        }),
    })""")
    if screenshot is not None:
        page.screenshot(path=str(screenshot), full_page=True)
    page.close()
    return {**found, "problems": problems}


def test_the_demo_report_shows_every_section_and_figure(browser, demo_warehouse, tmp_path):
    _, output, index = demo_warehouse
    assert f"report written to {index.resolve()}" in output
    shot = tmp_path / "report.png"
    found = inspect(browser, index, shot)
    assert found["problems"] == []
    assert found["sections"] == SECTIONS
    assert sorted(set(found["kinds"]) - {"metrics-table"}) == sorted(KINDS)
    assert found["figures"] == len(list((index.parent / "figures").glob("*.svg"))) >= 20
    assert found["broken"] == [] and found["empty"] == [] and found["scripts"] == 0
    assert found["tables"] and [t for t in found["tables"] if not (t["fits"] or t["scrolls"])] == []
    assert next(t for t in found["tables"] if t["kind"] == "hb-leaderboard")["fits"]     # all its columns in view
    assert shot.stat().st_size > 100_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {shot}")


def test_a_missing_figure_is_reported_as_a_failed_load(browser, demo_warehouse, tmp_path):
    _, _, index = demo_warehouse
    copy = tmp_path / "report"
    shutil.copytree(index.parent, copy)
    victim = sorted((copy / "figures").glob("*-hb-lap-heatmap.svg"))[0]
    victim.unlink()
    found = inspect(browser, copy / "index.html")
    assert any("failed load" in p and victim.name in p for p in found["problems"]), found["problems"]
    assert len(found["broken"]) == 1 and found["broken"][0].endswith(victim.name)


GRIDS = ("figure-3", "figure-4", "figure-e7", "figure-e8", "figure-e9", "figure-f1", "figure-f2", "by-format",
         "by-eval-target")


def test_the_interval_grids_render_every_text_inside_the_canvas_and_the_panels_apart(browser, demo_warehouse):
    """The interval grids are laid out from estimated text widths (ingest/publish/interval_figures.py):
    as Chromium renders them, no text leaves the canvas, no two panels (their titles, ticks and labels)
    overlap, and the title, the note and the legend stay off every panel."""
    _, _, index = demo_warehouse
    grids = sorted(f for f in (index.parent / "figures").glob("*.svg") if f.stem.split("-", 1)[1] in GRIDS)
    assert len(grids) >= 10
    context = browser.contexts[0] if browser.contexts else browser.new_context()
    page = context.new_page()
    for figure in grids:
        page.goto(figure.resolve().as_uri(), wait_until="load")
        found = page.evaluate("""() => {
            const rect = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
            const panels = Array.from(document.querySelectorAll('g.panel'));
            return {canvas: rect(document.documentElement), panels: panels.map(rect),
                    texts: Array.from(document.querySelectorAll('text')).map(rect),
                    loose: Array.from(document.querySelectorAll('svg > text')).map(rect)};
        }""")
        canvas, panels, loose = found["canvas"], found["panels"], found["loose"]

        def inside(box, within=canvas):
            return (within[0] - 0.5 <= box[0] and box[2] <= within[2] + 0.5
                    and within[1] - 0.5 <= box[1] and box[3] <= within[3] + 0.5)

        def overlap(a, b):
            return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5

        assert panels and all(inside(box) for box in found["texts"]), figure.name
        assert not [(i, j) for i, a in enumerate(panels) for j, b in enumerate(panels) if i < j and overlap(a, b)], figure.name
        assert not [(i, j) for i, a in enumerate(loose) for j, b in enumerate(panels) if overlap(a, b)], figure.name
    page.close()
