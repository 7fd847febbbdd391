"""The explorer in headless Chromium on the demo: from the metrics table to a significant ΔHTR cell's
evidence to a pair and back, by clicks and by the keyboard, then two models compared, then an audit row
to a decision date's replies and one reply; what the pages
show equals hindsight metrics (and --compare); no request leaves the explorer's origin, the console stays clean, and an automated
accessibility check passes on every page. Its screenshots are the docs' (HINDSIGHT_WRITE_SCREENSHOTS=1
writes them into docs/img)."""
from __future__ import annotations

import os
import re
import threading
from contextlib import closing
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pytest
from test_report_browser import browser  # noqa: F401 - the Chromium fixture

from conftest import PROJECT
from ingest.explore.app import Explorer
from ingest.explore.server import serve
from ingest.publish.slices import slice_metrics
from ingest.serve.snapshots import open_marts

pytestmark = [pytest.mark.browser, pytest.mark.slow]
IMAGES = PROJECT / "docs" / "img"
# every control labelled, every table header scoped, one h1, the page's language, images described
ACCESSIBILITY = """() => {
    const problems = [];
    if (!document.documentElement.lang) problems.push('no lang on <html>');
    if (document.querySelectorAll('h1').length !== 1) problems.push('not one h1');
    for (const control of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
        const labelled = (control.id && document.querySelector(`label[for="${control.id}"]`)) || control.closest('label')
            || control.getAttribute('aria-label');
        if (!labelled) problems.push(`unlabelled ${control.tagName} ${control.name}`);
    }
    for (const header of document.querySelectorAll('thead th')) if (!header.getAttribute('scope')) problems.push('th without scope');
    for (const image of document.images) if (!image.alt) problems.push('image without alt');
    for (const link of document.querySelectorAll('a')) if (!link.textContent.trim()) problems.push(`empty link ${link.href}`);
    for (const button of document.querySelectorAll('button')) if (!button.textContent.trim()) problems.push('unnamed button');
    return problems;
}"""


@pytest.fixture(scope="module")
def explorer(demo_warehouse):
    db = demo_warehouse[0]
    server = serve(Explorer(db), port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield db, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def shot(page, name: str, tmp_path) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    assert path.stat().st_size > 20_000
    if os.environ.get("HINDSIGHT_WRITE_SCREENSHOTS"):
        IMAGES.mkdir(exist_ok=True)
        (IMAGES / path.name).write_bytes(path.read_bytes())


def test_three_clicks_from_a_metric_to_the_pair_behind_it_and_back(browser, explorer, tmp_path):  # noqa: F811
    db, url = explorer
    context = browser.contexts[0] if browser.contexts else browser.new_context()
    page = context.new_page()
    page.set_viewport_size({"width": 1360, "height": 900})
    problems, elsewhere = [], []
    page.on("console", lambda message: problems.append(message.text) if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("request", lambda request: elsewhere.append(request.url) if not request.url.startswith(url) else None)

    page.goto(f"{url}/?metric=delta_htr&by=model,condition")
    assert page.evaluate(ACCESSIBILITY) == []
    with closing(open_marts(db)) as con:
        expected = slice_metrics(["delta_htr"], ["model", "condition"], con=con)
    rows = page.locator("tr[data-metric]")
    assert rows.count() == len(expected)
    # each cell's interval drawn: a forest plot the browser lays out, a mark per cell, its name read out
    plot = page.locator("svg[data-forest]")
    assert plot.count() == 1 and plot.bounding_box()["height"] > 20 * len(expected)
    assert plot.locator("[data-cell-plot]").count() == int(expected["estimate"].notna().sum())
    assert page.evaluate("""() => { const svg = document.querySelector('svg[data-forest]');
        return svg.getAttribute('role') === 'img' && svg.getAttribute('aria-labelledby').split(' ')
            .every(id => document.getElementById(id) && document.getElementById(id).textContent.trim().length > 10); }""")
    widths = plot.locator("line.interval").evaluate_all("lines => lines.map(l => l.getBoundingClientRect().width)")
    assert widths and max(widths) > 10
    # an interval never wraps inside itself, however narrow the window
    page.set_viewport_size({"width": 700, "height": 900})
    assert page.locator("span.ci").evaluate_all("spans => spans.every(s => s.getClientRects().length === 1)")
    page.set_viewport_size({"width": 1360, "height": 900})
    shot(page, "explore-metrics", tmp_path)

    # click 1: the first significant ΔHTR cell's estimate
    significant = expected[expected["significant"] & (expected["estimate"] > 0)].iloc[0]
    row = page.locator("tr[data-metric]").filter(has_text=significant.model).filter(
        has=page.locator(f'td:text-is("{significant.condition}")')).filter(has_text=significant.answer__prompt_variant).first
    with page.expect_navigation():
        row.locator("a[data-evidence]").click()
    assert page.url.startswith(f"{url}/cell?")
    shown = [float(v) for v in page.locator("[data-stats] td[data-estimate]").evaluate_all("cells => cells.map(c => c.dataset.estimate)")]
    assert shown == pytest.approx([significant.estimate] * 2, abs=1e-12)
    assert int(re.search(r"(\d+) samples match", page.inner_text("main")).group(1)) == significant.n_answers
    assert page.evaluate(ACCESSIBILITY) == []
    shot(page, "explore-cell", tmp_path)
    evidence = page.url

    # click 2: a pair where the model moved toward the trap, found by the flip filter
    with page.expect_navigation():          # the script applies a filter as it is chosen
        page.select_option("#f-flip", "masked right → full trap")
    assert "f.flip=" in page.url
    with page.expect_navigation():
        page.locator("a[data-open]").first.click()
    assert page.url.startswith(f"{url}/pair?")
    text = page.inner_text("main")
    assert "never sent to the model" in text and "Full context" in text and "Masked context" in text
    # what masking removed, at first sight: the cutoff drawn in the list, the removed events in view, no box to scroll
    assert page.locator('li[data-removed="true"]').count() > 0 and page.locator("li[data-cutoff]").is_visible()
    assert page.locator("ol[data-timeline]").evaluate("list => list.scrollHeight <= list.clientHeight + 1")
    assert page.evaluate(ACCESSIBILITY) == []
    shot(page, "explore-pair", tmp_path)

    # click 3: back to the evidence, as it was filtered
    with page.expect_navigation():
        page.locator("a[data-back]").click()
    assert page.url.startswith(f"{url}/cell?") and "f.flip=" in page.url
    page.goto(evidence)
    with page.expect_navigation():
        page.locator("a[data-back]").click()
    assert page.url.startswith(f"{url}/?")

    # the keyboard: j moves to the first cell link, Enter opens it
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.dataset.evidence !== undefined")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url.startswith(f"{url}/cell?")

    # compare two models: the form, the differences (hindsight metrics --compare's), the questions where they differ
    compare = "model=sim:hindsight@0.3,sim:noise@0.2"
    with page.expect_navigation():
        page.locator("nav a", has_text="Compare").click()
    page.fill("#compare", compare)
    page.fill("#by", "condition")
    with page.expect_navigation():
        page.locator("button", has_text="Compare").click()
    with closing(open_marts(db)) as con:
        differences = slice_metrics(["delta_htr"], ["condition"], con=con, compare=compare)
    shown = page.locator("tr[data-difference]").evaluate_all("rows => rows.map(r => Number(r.dataset.difference))")
    assert shown == pytest.approx(list(differences["difference"]), abs=1e-12, nan_ok=True)
    assert page.locator("svg[data-forest] [data-cell-plot]").count() == differences["difference"].notna().sum()
    # every "yes" over too few cases carries its flag, in both significance columns; the dashed line is drawn
    flags = page.locator("tr[data-difference] .flag").count()
    assert flags == (differences["few_cases"] & differences["significant_unadjusted"]).sum() + (
        differences["few_cases"] & differences["significant_adjusted"]).sum() > 0
    assert page.locator("svg[data-forest] .cell.flagged").count() == (differences["few_cases"] & differences["ci_low"].notna()).sum()
    assert page.locator("p.caveat").inner_text() == ("left out of delta_htr (model sim:noise@0.2 has no row here): "
                                                     "condition=1.1, 1.2, 2.1, 2.2, 3.1, 3.2; prompt_variant=warning; visibility=paired")
    assert "A = sim:hindsight@0.3, B = sim:noise@0.2" in page.inner_text("h1")
    assert page.evaluate(ACCESSIBILITY) == []
    shot(page, "explore-compare", tmp_path)
    with page.expect_navigation():
        page.locator("a[data-questions]").first.click()
    assert page.locator("tr[data-question]").count() == differences.iloc[0].n_questions
    assert page.evaluate(ACCESSIBILITY) == []

    # an audit row: its verdicts, a decision date's replies with what the parser read, and one reply whole
    with page.expect_navigation():
        page.locator("nav a", has_text="HindsightBench").click()
    assert page.evaluate(ACCESSIBILITY) == []
    with page.expect_navigation():
        page.locator("tr[data-model-key='audit-trigger'] a[data-row]").click()
    assert page.locator("[data-verdict]").count() == 1 and page.evaluate(ACCESSIBILITY) == []
    with page.expect_navigation():
        page.locator("tr[data-date='2008-09-15'] a[data-date-link]").click()
    with closing(open_marts(db)) as con:
        replies = con.execute("""select count(*) from fct_hb_replies
                                 where model_key = 'audit-trigger' and decision_date = '2008-09-15'""").fetchone()[0]
    assert page.locator("tr[data-request]").count() == replies > 0
    assert page.locator("[data-current-parse]").count() == replies and page.locator("ul[data-flags]").count() > 0
    assert page.evaluate(ACCESSIBILITY) == []
    shot(page, "explore-audit", tmp_path)
    with page.expect_navigation():                 # the arm filter applies as it is chosen
        page.select_option("#f-arm", "W")
    assert set(page.locator("tr[data-request]").evaluate_all("rows => rows.map(r => r.dataset.arm)")) == {"W"}
    with page.expect_navigation():
        page.locator("a[data-reply]").first.click()
    assert page.locator("[data-reply-text]").count() == 1 and page.evaluate(ACCESSIBILITY) == []
    page.close()
    assert problems == [] and elsewhere == []


def test_the_browser_is_refused_through_a_rebound_name_and_no_parameter_fails_a_page(browser, explorer):  # noqa: F811
    """A page of another site that points a name of its own at 127.0.0.1 (DNS rebinding: the browser
    resolves rebind.test to loopback) gets a 400, not the data; fuzzed parameters in the browser's own
    requests get a page, a 400 or a 404, never a 500."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    _, url = explorer
    port = url.rsplit(":", 1)[1]
    context = browser.contexts[0] if browser.contexts else browser.new_context()
    page = context.new_page()
    reply = page.goto(f"http://rebind.test:{port}/cell.csv?metric=delta_htr&by=model")
    assert reply.status == 400 and "does not serve the host name 'rebind.test:" in page.inner_text("main")
    assert reply.headers["content-type"].startswith("text/html")

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
              derandomize=True)
    @given(st.sampled_from(["/", "/cell", "/pair", "/compare", "/hb/row", "/hb/reply", "/case"]),
           st.dictionaries(st.sampled_from(["metric", "by", "where", "page", "id", "compare", "row_version", "replicate", "date"]),
                           st.one_of(st.sampled_from(["²", "cohort = 'sepsis", "(" * 300, "-1", "delta_htr"]), st.text(max_size=20)),
                           max_size=4))
    def check(path, params):
        answered = page.request.get(f"{url}{path}", params=params)
        assert answered.status in (200, 400, 404), (path, params, answered.text()[:500])

    check()
    page.close()


def opens(href: str) -> bool:
    """Whether a link of a static slice names one of its files."""
    parts = urlsplit(href)
    return parts.scheme == "file" and Path(url2pathname(parts.path)).is_file()


def test_a_static_slice_opens_from_file_with_the_network_blocked(browser, explorer, tmp_path):  # noqa: F811
    from ingest.explore.static_site import write_static

    db, _ = explorer
    write_static(Explorer(db), tmp_path / "slice", ["delta_htr"], ["model", "condition"],
                 "model = 'sim:hindsight@0.3' and condition = '2.1'")
    context = browser.new_context()
    blocked = []

    def refuse(route):
        blocked.append(route.request.url)
        route.abort()

    context.route(re.compile(r"^(?!file:).*"), refuse)          # everything but the folder's own files
    page = context.new_page()
    problems = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("requestfailed", lambda request: problems.append(request.url))
    page.goto((tmp_path / "slice" / "index.html").as_uri())
    assert page.locator("tr[data-metric]").count() == 2          # the two prompt variants
    with page.expect_navigation():
        page.locator("a[data-evidence]").first.click()
    assert page.url.startswith("file:") and page.locator("tr[data-id]").count() > 0
    assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith("system-ui")     # its stylesheet loaded
    with page.expect_navigation():
        page.locator("a[data-open]").first.click()
    assert page.locator('li[data-removed="true"]').count() > 0 and "never sent to the model" in page.inner_text("main")
    # every link of the slice opens a page of it; the same question elsewhere, too
    elsewhere_links = page.locator("ul.elsewhere a").evaluate_all("links => links.map(l => l.href)")
    assert elsewhere_links and all(opens(href) for href in elsewhere_links)
    page.goto((tmp_path / "slice" / "index.html").as_uri())
    assert page.locator("svg[data-forest] [data-cell-plot]").count() == 2       # the intervals drawn offline too
    hrefs = set()
    for name in sorted((tmp_path / "slice").glob("*.html"))[:40]:
        page.goto(name.as_uri())
        hrefs |= set(page.locator("a[href]").evaluate_all("links => links.map(l => l.href)"))
        assert page.locator("a:not([href])").count() == 0          # nothing dressed as a link that is not one
    assert hrefs and all(opens(href) for href in hrefs), [h for h in hrefs if not opens(h)]
    page.close()
    context.close()
    assert blocked == [] and problems == []
