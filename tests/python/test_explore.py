"""`hindsight explore` on the demo: the metrics it shows are hindsight metrics', a cell's evidence
lists as many samples as the cell counts and recomputes its estimate, a pair shows what masking
removed; bad parameters are 400s with a reason, unknown ids 404s, nothing outside the static folder
is served, every page carries a Content-Security-Policy, model text is text (answers holding markup
and a javascript: link), and a page reads one build while builds publish. The browser tour is in
test_explore_browser.py."""
from __future__ import annotations

import html
import io
import json
import re
import shutil
import socket
import subprocess
import sys
import time
from contextlib import closing
from urllib.parse import parse_qs, urlencode, urlsplit

import pandas as pd
import pyarrow.parquet as pq
import pytest

from conftest import cli_env, hindsight, new_warehouse, query, write_jsonl
from ingest.explore.app import CSP, Explorer
from ingest.publish.slices import slice_metrics
from ingest.serve.snapshots import open_marts

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(demo_warehouse):
    return demo_warehouse[0]


@pytest.fixture(scope="module")
def app(demo):
    return Explorer(demo)


def get(app, path: str, **params) -> tuple[int, dict, str | bytes]:
    """APP's answer to GET PATH?PARAMS: (status, headers, text or bytes)."""
    query_string = urlencode(params, doseq=True)
    return get_url(app, path + ("?" + query_string if query_string else ""))


def get_url(app, url: str) -> tuple[int, dict, str | bytes]:
    path, _, query_string = html.unescape(url).partition("?")
    seen = {}

    def start(status, headers):
        seen["status"], seen["headers"] = int(status.split()[0]), dict(headers)

    body = b"".join(app({"PATH_INFO": path, "QUERY_STRING": query_string, "REQUEST_METHOD": "GET"}, start))
    kind = seen["headers"]["Content-Type"]
    return seen["status"], seen["headers"], body.decode() if kind.startswith("text/") else body


def attributes(text: str, name: str) -> list[str]:
    return [html.unescape(v) for v in re.findall(rf'{name}="([^"]*)"', text)]


def test_the_metrics_page_shows_hindsight_metrics_cells_each_linked_to_its_evidence(app, demo):
    status, headers, text = get(app, "/", metric=["delta_htr", "acc"], by="model,relpos_band", where="cohort = 'sepsis'")
    assert status == 200 and headers["Content-Security-Policy"] == CSP
    with closing(open_marts(demo)) as con:
        expected = slice_metrics(["delta_htr", "acc"], ["model", "relpos_band"], "cohort = 'sepsis'", con=con)
        build, = con.execute("select dbt_invocation_id from dim_build").fetchone()
    rows = re.findall(r'<tr data-metric="([^"]*)" data-estimate="([^"]*)" data-n-questions="([^"]*)">', text)
    assert len(rows) == len(expected) > 20
    for (metric, estimate, n_questions), cell in zip(rows, expected.itertuples()):
        assert metric == cell.metric and int(n_questions) == cell.n_questions
        assert (estimate == "nan" and pd.isna(cell.estimate)) or float(estimate) == pytest.approx(cell.estimate, abs=1e-12)
    assert f'data-snapshot="{build}"' in text
    assert len(attributes(text, "href")) and all(link.startswith("/cell?") for link in re.findall(r'href="(/cell[^"]*)"', text))


def cell_links(app, **params) -> list[str]:
    _, _, text = get(app, "/", **params)
    return [html.unescape(link) for link in re.findall(r'href="(/cell\?[^"]*)" data-evidence', text)]


def test_a_cells_evidence_has_as_many_samples_as_it_counts_and_its_estimate(app, demo):
    links = cell_links(app, metric="delta_htr", by="model,condition")
    assert len(links) > 20
    with closing(open_marts(demo)) as con:
        expected = slice_metrics(["delta_htr"], ["model", "condition"], con=con)
    for link in links[:6]:
        status, _, text = get_url(app, link)
        assert status == 200, text[-500:]
        shown, recomputed = (float(v) for v in re.findall(r'data-estimate="([^"]*)"', text)[:2])
        params = dict(pair.split("=", 1) for pair in html.unescape(link).split("?", 1)[1].split("&"))
        model = params["v.model"].replace("%3A", ":").replace("%40", "@")
        cell = expected[(expected["model"] == model) & (expected["condition"] == params["v.condition"])
                        & (expected["answer__prompt_variant"] == params["v.answer__prompt_variant"])].iloc[0]
        assert shown == pytest.approx(cell.estimate, abs=1e-12) and recomputed == pytest.approx(cell.estimate, abs=1e-12)
        total = int(re.search(r"(\d+) samples match", text).group(1))
        assert total == cell.n_answers
        # every page of it, and no more
        pages = -(-total // 50)
        ids = set()
        for page in range(1, pages + 1):
            _, _, listed = get_url(app, f"{link}&page={page}")
            ids |= set(re.findall(r'<tr data-id="([^"]*)"', listed))
        assert len(ids) == total
        assert get_url(app, f"{link}&page={pages + 1}")[0] == 400


def test_filters_search_and_downloads_keep_to_the_cell(app):
    link = cell_links(app, metric="delta_htr", by="model")[0]
    _, _, text = get_url(app, link)
    total = int(re.search(r"(\d+) samples match", text).group(1))
    flips = [html.unescape(v) for v in re.findall(r'<option value="([^"]+)"[^>]*>[^<]*</option>',
                                                     text.split('id="f-flip"')[1].split("</select>")[0])]
    assert len(flips) > 1
    counted = sum(int(re.search(r"(\d+) samples match", get_url(app, f"{link}&{urlencode({'f.flip': flip})}")[2]).group(1))
                  for flip in flips)
    assert counted == total
    searched = get_url(app, f"{link}&q=zzzz-no-such-text-zzzz")[2]
    assert "0 samples match" in searched
    status, headers, body = get_url(app, link.replace("/cell?", "/cell.csv?"))
    assert status == 200 and "attachment" in headers["Content-Disposition"] and len(body.strip().splitlines()) == total + 1
    status, _, body = get_url(app, link.replace("/cell?", "/cell.parquet?"))
    table = pq.read_table(io.BytesIO(body))
    assert status == 200 and table.num_rows == total and b"hindsight_filter" in table.schema.metadata


def test_a_pair_shows_the_hidden_fields_the_timeline_masking_cut_and_both_answers(app, demo):
    link = cell_links(app, metric="delta_htr", by="model,condition", where="condition = '2.1'")[0]
    _, _, text = get_url(app, link)
    pair_link = re.search(r'href="(/pair\?[^"]*)" data-open', text).group(1)
    status, _, page = get_url(app, pair_link)
    assert status == 200
    pair_id = re.search(r"id=([0-9a-f]+)", html.unescape(pair_link)).group(1)
    (question_id, case_id, cohort, cutoff, correct), = query(demo, """
        select q.question_id, q.case_id, q.cohort, q.cutoff_hours, q.correct_answer
        from fct_answer_pairs as p join dim_questions as q using (question_id) where p.pair_id = ?""", [pair_id])
    removed = query(demo, "select count(*) from fct_tts_events where cohort = ? and case_id = ? and source = 'H' and time_hours > ?",
                    [cohort, case_id, cutoff])[0][0]
    assert page.count('data-removed="true"') == removed > 0
    assert f"<dd data-reference>{html.escape(correct)}</dd>" in page
    assert 'data-side="full"' in page and 'data-side="masked"' in page
    assert re.search(r'href="/cell\?', page) is None or "data-back" in page
    back = re.search(r'href="([^"]*)" data-back', page)
    assert back and html.unescape(back.group(1)).startswith("/cell?")


@pytest.mark.parametrize("path, params, status, reason", [
    ("/", {"metric": "delta_hrt"}, 400, "unknown metric 'delta_hrt'"),
    ("/", {"by": "modell"}, 400, "unknown dimension 'modell'"),
    ("/", {"where": "1 = 1; drop table fct_answers"}, 400, "2 statements, not one condition"),
    ("/", {"where": "case_id in (select * from read_csv('/etc/passwd'))"}, 400, "reading files or URLs"),
    ("/cell", {"metric": "acc", "by": "model"}, 400, "no value for model"),
    ("/cell", {"metric": "acc", "by": "model", "v.model": "x", "v.answer__prompt_variant": "standard",
               "v.answer__visibility": "full", "page": "x"}, 400, "'x' is not a whole number"),
    ("/cell", {"metric": "acc", "by": "model", "v.model": "no-such-model", "v.answer__prompt_variant": "standard",
               "v.answer__visibility": "full"}, 404, "no such cell"),
    ("/pair", {"id": "no-such-pair"}, 404, "no pair 'no-such-pair'"),
    ("/answer", {"id": "no-such-answer"}, 404, "no answer 'no-such-answer'"),
    ("/nowhere", {}, 404, "no page /nowhere"),
    ("/static/../../pyproject.toml", {}, 404, "no such file"),
    ("/static/explore.css/../app.py", {}, 404, "no such file"),
])
def test_a_bad_parameter_is_a_400_and_an_unknown_id_a_404_with_one_line(app, path, params, status, reason):
    got, headers, text = get(app, path, **params)
    assert got == status and headers["Content-Security-Policy"] == CSP
    shown = html.unescape(re.search(r"<p class=\"reason\" data-reason>(.*?)</p>", text, re.S).group(1))
    assert reason in shown and "\n" not in shown


def test_the_static_files_are_the_packages_and_the_pages_load_nothing_else(app):
    status, headers, body = get(app, "/static/explore.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    _, _, text = get(app, "/")
    sources = re.findall(r'(?:src|href)="([^"]*)"', text)
    assert [s for s in sources if s.startswith(("http:", "https:", "//"))] == []
    assert "<script>" not in text and " on" not in re.sub(r">[^<]*<", "><", text).lower().replace(" one", "")


def test_a_back_link_from_the_url_is_only_ever_the_explorers_own(app, demo):
    pair_id, = query(demo, "select min(pair_id) from fct_answer_pairs")[0]
    _, _, page = get(app, "/pair", id=pair_id, back="javascript:alert(1)")
    assert "javascript:" not in page and "data-back" not in page


@pytest.fixture(scope="module")
def hostile(demo, tmp_path_factory):
    """The demo with a replayed model whose answers hold markup and a javascript: link, built."""
    db = new_warehouse(tmp_path_factory.mktemp("hostile"))
    shutil.copy(demo, db)
    questions = query(db, "select question_id from dim_questions where format = 'multiple choice' order by question_id limit 2")
    texts = ["<script>window.pwned = 1</script>", "<img src=x onerror=\"window.pwned = 2\">",
             "<a href=\"javascript:window.pwned = 3\">click</a>"]
    rows = [{"question_id": q, "model": "replay:hostile", "condition": "2.1", "visibility": visibility,
             "answer": texts[(i + j) % 3]} for i, (q,) in enumerate(questions) for j, visibility in enumerate(("full", "masked"))]
    # a free response too, judged elsewhere by a judge whose reasons hold the same markup
    (free,), = query(db, "select question_id from dim_questions where format = 'free response' order by question_id limit 1")
    rows += [{"question_id": free, "model": "replay:hostile", "condition": "2.1", "visibility": visibility, "answer": texts[j]}
             for j, visibility in enumerate(("full", "masked"))]
    hindsight(db, "load", "responses", write_jsonl(db.parent / "hostile.jsonl", rows))
    judged = [{"kind": "individual", "question_id": free, "model": "replay:hostile", "condition": "2.1", "visibility": visibility,
               "judge": "replay:hostile-judge", "accuracy_score": 0, "htr_score": 0, "reason": texts[j]}
              for j, visibility in enumerate(("full", "masked"))]
    judged.append({"kind": "paired", "question_id": free, "model": "replay:hostile", "condition": "2.1", "judge": "replay:hostile-judge",
                   "full_equals_masked": False, "full_accuracy_score": 0, "masked_accuracy_score": 0, "full_htr_score": 0,
                   "masked_htr_score": 0, "hbr_score": 0, "reason": texts[2]})
    hindsight(db, "load", "judgments", write_jsonl(db.parent / "hostile-judgments.jsonl", judged))
    hindsight(db, "build", "--exclude", "resource_type:test", "resource_type:unit_test")
    return db, texts


def test_model_text_with_markup_is_shown_as_text(hostile):
    db, texts = hostile
    app = Explorer(db)
    pairs = [r[0] for r in query(db, "select pair_id from fct_answer_pairs where model = 'replay:hostile'")]
    assert pairs
    shown, reasons = set(), set()
    for pair_id in pairs:
        status, _, page = get(app, "/pair", id=pair_id)
        assert status == 200
        assert "<script>window" not in page and "<img src=x" not in page and 'href="javascript:' not in page
        shown |= {html.unescape(text) for text in re.findall(r'<p class="answer" data-answer>(.*?)</p>', page, re.S)}
        reasons |= {html.unescape(text) for text in re.findall(r'<dd data-reason="reason">(.*?)</dd>', page, re.S)}
    assert set(texts) <= shown          # each as the text it is, escaped in the page
    assert reasons == set(texts)        # the judge's reasons too: both answers' and the pair's


def test_explore_binds_loopback_and_warns_for_another_address(demo, tmp_path):
    def start(*args):
        return subprocess.Popen([sys.executable, "-m", "ingest.cli", "explore", "--port", "0", *args], env=cli_env(demo),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    process = start()
    try:
        line = process.stdout.readline()
        assert line.startswith("hindsight explore: http://127.0.0.1:"), line
        port = int(re.search(r":(\d+)/", line).group(1))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(b"GET / HTTP/1.0\r\n\r\n")
            reply = connection.makefile("rb").read().decode()
        assert reply.startswith("HTTP/1.0 200") and "Content-Security-Policy" in reply
    finally:
        process.terminate()
        process.wait(timeout=10)
    process = start("--host", "0.0.0.0")
    try:
        line = process.stdout.readline()
        assert "http://0.0.0.0:" in line
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
    assert "warning: listening on 0.0.0.0" in err


def test_a_page_reads_one_build_while_builds_publish(demo, tmp_path):
    """Pages asked for while a build publishes (the demo rebuilt) never fail, and each names one build."""
    shutil.copytree(demo.parent, tmp_path, dirs_exist_ok=True)
    db = tmp_path / demo.name
    app = Explorer(db)
    link = cell_links(app, metric="delta_htr", by="model")[0]
    build = subprocess.Popen([sys.executable, "-m", "ingest.cli", "build", "--exclude", "resource_type:test",
                              "resource_type:unit_test"], env=cli_env(db), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = set()
    try:
        while build.poll() is None:
            status, _, text = get_url(app, link)
            assert status == 200, text[-1000:]
            snapshots = set(re.findall(r'data-snapshot="([^"]*)"', text))
            assert len(snapshots) == 1
            seen |= snapshots
            time.sleep(0.2)
    finally:
        build.wait(timeout=600)
    assert build.returncode == 0
    status, _, text = get_url(app, link)
    seen |= set(re.findall(r'data-snapshot="([^"]*)"', text))
    assert status == 200 and len(seen) == 2        # the build before, then the new one



def test_a_comparison_is_hindsight_metrics_compare_and_leads_to_the_questions_where_the_two_differ(app, demo):
    compare = "model=sim:hindsight@0.3,sim:noise@0.2"
    status, _, text = get(app, "/compare", metric="delta_htr", by="condition", compare=compare)
    assert status == 200
    with closing(open_marts(demo)) as con:
        expected = slice_metrics(["delta_htr"], ["condition"], con=con, compare=compare)
    rows = re.findall(r'data-difference="([^"]*)" data-ci-low="([^"]*)" data-ci-high="([^"]*)"', text)
    assert len(rows) == len(expected) > 3
    for (difference, low, high), cell in zip(rows, expected.itertuples()):
        assert float(difference) == pytest.approx(cell.difference, abs=1e-12)
        assert float(low) == pytest.approx(cell.ci_low, abs=1e-12) and float(high) == pytest.approx(cell.ci_high, abs=1e-12)
    link = html.unescape(re.search(r'href="(/compare/questions\?[^"]*)" data-questions', text).group(1))
    status, _, listed = get_url(app, link)
    differences = [abs(float(v)) for v in re.findall(r'<tr data-question="[^"]*" data-difference="([^"]*)"', listed)]
    assert status == 200 and len(differences) == expected.iloc[0].n_questions
    assert differences == sorted(differences, reverse=True) and differences[0] > 0
    assert get(app, "/compare", metric="acc", compare="cohort=a,b")[0] == 400


def test_each_cases_influence_is_the_cell_without_it_and_a_case_lists_its_questions(app, demo):
    link = cell_links(app, metric="delta_htr", by="model,condition")[0]
    _, _, text = get_url(app, link)
    status, _, page = get_url(app, re.search(r'href="([^"]*)" data-cases', text).group(1))
    assert status == 200
    rows = re.findall(r'data-case="([^"]*)" data-without="([^"]*)" data-n="(\d+)"', page)
    params = dict(p.split("=", 1) for p in html.unescape(link).split("?", 1)[1].split("&"))
    model = params["v.model"].replace("%3A", ":").replace("%40", "@")
    values = query(demo, """select cohort || '/' || case_id, delta_htr_sum from fct_metric_parts
                            where model = ? and condition = ? and prompt_variant = ? and visibility = 'paired' and delta_htr_n = 1""",
                   [model, params["v.condition"], params["v.answer__prompt_variant"]])
    assert len(rows) == len({c for c, _ in values}) > 1 and sum(int(n) for _, _, n in rows) == len(values)
    for case, without, _ in rows:
        kept = [v for c, v in values if c != case]
        assert float(without) == pytest.approx(sum(kept) / len(kept), abs=1e-12)
    cohort, case_id = rows[0][0].split("/")
    status, _, page = get(app, "/case", cohort=cohort, case_id=case_id)
    listed = set(re.findall(r'data-question="([^"]*)"', page))
    assert status == 200 and listed == {q for (q,) in query(demo, "select question_id from dim_questions where cohort = ? and case_id = ?",
                                                             [cohort, case_id])}
    assert get(app, "/case", cohort=cohort, case_id="no-such-case")[0] == 404


def test_the_audit_rows_show_their_verdicts_and_lead_to_their_cells_by_date(app, demo):
    status, _, text = get(app, "/hb")
    rows = query(demo, """select r.model_key, r.e2_est, coalesce(b.failed_checks, 'pass') from agg_hb_audit_rows as r
                          left join agg_hb_robustness as b using (model_key, row_version) order by r.model_key, r.row_version""")
    shown = re.findall(r'<tr data-model-key="([^"]*)" data-e2="([^"]*)">', text)
    assert status == 200 and [k for k, _ in shown] == [k for k, _, _ in rows] and len(rows) >= 4
    assert all(float(e2) == pytest.approx(expected, abs=1e-12) for (_, e2), (_, expected, _) in zip(shown, rows))
    assert all(verdict in text for _, _, verdict in rows)
    link = html.unescape(re.search(r'href="(/hb/row\?[^"]*)" data-row', text).group(1))
    status, _, page = get_url(app, link)
    model_key = re.search(r"model_key=([^&]+)", link).group(1)
    dates = query(demo, """select count(*) from (select decision_date from agg_hb_perdate_crosstab where model_key = ? and row_version = 1
                                                  union select decision_date from fct_hb_replies where model_key = ?)""",
                  [model_key, model_key])[0][0]
    assert status == 200 and page.count('data-date="') == dates > 10 and "data-verdict" in page
    assert get(app, "/hb/row", model_key="no-such-model")[0] == 404
    assert get(app, "/hb/row", model_key=model_key, row_version="x")[0] == 400


def test_an_audit_rows_date_leads_to_its_replies_with_what_the_parsers_read_and_the_transcript_flags(app, demo):
    model_key, version, parser = query(demo, """select model_key, row_version, parser_version from agg_hb_audit_rows
                                                where model_key = 'audit-trigger'""")[0]
    _, _, row_page = get(app, "/hb/row", model_key=model_key, row_version=version)
    link = html.unescape(re.findall(r'href="(/hb/cell\?[^"]*)" data-date-link', row_page)[100])
    status, _, page = get_url(app, link)
    date = re.search(r"date=([0-9-]+)", link).group(1)
    replies = query(demo, """select r.kind, coalesce(r.arm, ''), r.request_id, p.parse_status, r.is_truncated
                             from fct_hb_replies as r left join fct_hb_reply_parses as p
                               on p.model_key = r.model_key and p.request_id = r.request_id and p.parser_version = ?
                             where r.model_key = ? and r.decision_date = ?""", [parser, model_key, date])
    shown = re.findall(r'<tr data-kind="([^"]*)" data-arm="([^"]*)" data-request="([^"]*)">', page)
    assert status == 200 and sorted(shown) == sorted(r[:3] for r in replies)
    # every arm, the REC probe and the LAP samples (the protocol's and the sensitivity re-probes)
    assert {arm for kind, arm, _ in shown if kind == "arm"} == {"R", "D", "M", "W", "W72"}
    assert {kind for kind, _, _ in shown} == {"arm", "rec", "lap"}
    current = re.findall(r'<div class="current" data-current-parse>([^:]+): (\w+)', page)
    assert sorted(status for _, status in current) == sorted(r[3] for r in replies) and {v for v, _ in current} == {parser}
    # the transcript flags on each whole W and M reply (W's with the asserted and true year and anachronism)
    audited = [r for r in replies if r[0] == "arm" and r[1] in ("W", "M") and not r[4]]
    assert page.count("data-flags") == len(audited) > 0
    assert page.count('data-flag="anachronism"') == sum(r[1] == "W" for r in audited)
    # one arm's replies; a reply whole with the request as sent
    _, _, only_w = get_url(app, link + "&arm=W")
    assert set(re.findall(r'<tr data-kind="arm" data-arm="(\w+)"', only_w)) == {"W"} and "<tr data-kind=\"lap\"" not in only_w
    reply_link = html.unescape(re.search(r'href="(/hb/reply\?[^"]*)" data-reply', only_w).group(1))
    status, _, reply_page = get_url(app, reply_link)
    named = {k: v[0] for k, v in parse_qs(urlsplit(reply_link).query).items()}
    assert named["arm"] == "W" and named["kind"] == "arm"      # named by its call position, as a release's replies are
    (user_text, reply_text), = query(demo, """select q.user_text, r.reply_text from fct_hb_requests as q
                                             join fct_hb_replies as r using (request_id)
                                             where r.model_key = ? and r.decision_date = ? and r.arm = 'W' and r.replicate = ?""",
                                     [model_key, named["date"], int(named["replicate"])])
    assert status == 200 and html.escape(user_text, quote=False) in reply_page.replace("&#34;", '"').replace("&#39;", "'")
    assert html.unescape(re.search(r"<pre class=\"message\" data-reply-text>(.*?)</pre>", reply_page, re.S).group(1)) == reply_text
    # the list downloads with each flag and each parser version's reading a column
    _, _, body = get_url(app, link + "&format=csv")
    table = pd.read_csv(io.StringIO(body))
    assert len(table) == len(replies) and {"flag_year", "flag_anachronism", f"{parser}_status"} <= set(table.columns)
    assert get(app, "/hb/cell", model_key=model_key, row_version=version, date="2008-9-15")[0] == 400
    assert get(app, "/hb/cell", model_key=model_key, row_version=version, date=date, kind="tweet")[0] == 400
    assert get(app, "/hb/cell", model_key=model_key, row_version=version, date="1999-01-15")[0] == 404
    assert get(app, "/hb/cell", model_key=model_key, row_version=version + 8, date=date)[0] == 404
    assert get(app, "/hb/reply", model_key=model_key, date="1999-01-15", kind="arm", arm="W", replicate=1)[0] == 404
    assert get(app, "/hb/reply", model_key=model_key, date=date, kind="arm", arm="W", temperature="warm")[0] == 400


def test_a_free_response_pair_shows_the_judges_verdicts_and_reasons(app, demo):
    pair_id, model, full_j, masked_j, paired_j = query(demo, """
        select p.pair_id, p.model, f.judgment_id, m.judgment_id, p.paired_judgment_id from fct_answer_pairs as p
        join fct_answers as f on f.response_id = p.full_response_id join fct_answers as m on m.response_id = p.masked_response_id
        where p.format = 'free response' and p.paired_judgment_id is not null order by p.pair_id limit 1""")[0]
    _, _, page = get(app, "/pair", id=pair_id, model=model)
    said = dict(query(demo, "select judgment_id, judge_output from fct_judgments where judgment_id in (?, ?, ?)",
                      [full_j, masked_j, paired_j]))
    assert set(said) == {full_j, masked_j, paired_j}
    for judgment_id, output in said.items():
        block = re.search(rf'data-judgment="{judgment_id}">(.*?)</div>', page, re.S).group(1)
        reason = json.loads(output)["reason"]
        assert f'<dd data-reason="reason">{html.escape(reason)}</dd>' in block
        assert html.unescape(re.search(r"data-judge-output>(.*?)</pre>", block, re.S).group(1)) == output
    assert "data-paired-judgment" in page


def test_a_filter_form_sent_with_every_list_at_any_filters_nothing(app):
    """The form sends every filter, "any" as an empty value: the same samples as no filter at all."""
    link = cell_links(app, metric="delta_htr", by="model")[0]
    plain = get_url(app, link)[2]
    sent = get_url(app, link + "&" + urlencode({f"f.{name}": "" for name in ("flip", "format", "options_type", "relpos_band",
                                                                          "parse_status", "finish_reason", "judge")}))[2]
    count = re.compile(r"(\d+) samples match")
    assert count.search(plain).group(1) == count.search(sent).group(1) != "0"


def test_a_static_slice_is_a_self_contained_folder_within_its_bound(app, demo, tmp_path):
    from ingest.explore.static_site import write_static

    out = tmp_path / "slice"
    done = write_static(app, out, ["delta_htr"], ["model", "condition"], "model = 'sim:hindsight@0.3' and condition = '2.1'")
    pairs = query(demo, "select count(*) from fct_answer_pairs where model = 'sim:hindsight@0.3' and condition = '2.1'")[0][0]
    assert done["bytes"] <= 5_000_000 and done["pages"] >= pairs + 3
    pages = list(out.glob("*.html"))
    assert len(pages) == done["pages"] and {p.name for p in (out / "static").iterdir()} == {"explore.css", "explore.js", "favicon.svg"}
    for page in pages:
        text = page.read_text()
        links = re.findall(r'(?:href|src)="([^"]*)"', text)
        assert all((out / html.unescape(target)).is_file() for target in links), (page.name, links)
        assert "<form" not in text
    done = hindsight(demo, "explore", "--static", out, expect=2)
    assert "the folder is not empty" in done.stderr


def test_a_pair_shows_the_request_exactly_as_the_runner_renders_it(app, demo):
    """The messages of the pair view are Appendix C's, rendered from the request row by the runner's
    own function (the singular dbt tests hold that no hidden field reaches a request row)."""
    from ingest.llm.prompts import answer_messages

    pair_id, question_id, condition, variant = query(demo, """
        select pair_id, question_id, condition, prompt_variant from fct_answer_pairs
        where condition = '1.1' order by pair_id limit 1""")[0]
    _, _, page = get(app, "/pair", id=pair_id)
    shown = [html.unescape(m) for m in re.findall(r'<pre class="message" data-message="[^"]*">(.*?)</pre>', page, re.S)]
    cursor = open_marts(demo)
    try:
        rows = cursor.execute("""select * from fct_answer_requests where question_id = ? and condition = ? and prompt_variant = ?
                                 and narrative_model is null order by visibility""", [question_id, condition, variant])
        names = [d[0] for d in rows.description]
        requests = {r[names.index("visibility")]: dict(zip(names, r)) for r in rows.fetchall()}
    finally:
        cursor.close()
    expected = [m["content"] for side in ("full", "masked") for m in answer_messages(requests[side])]
    assert shown == expected and len(shown) == 4


@pytest.mark.parametrize("path, params, name", [
    ("/", {"metric": "delta_htr", "by": "model"}, "metrics"),
    ("/compare", {"metric": "delta_htr", "by": "condition", "compare": "model=sim:hindsight@0.3,sim:noise@0.2"}, "comparison"),
    ("/hb", {}, "audit-rows"),
])
def test_every_list_downloads_as_csv_and_parquet_with_the_filter_that_made_it(app, path, params, name):
    _, _, text = get(app, path, **params)
    rows = len(re.findall(r"<tr data-", text))
    csv_link = html.unescape(re.search(r'href="([^"]*)" data-download="csv"', text).group(1))
    status, headers, body = get_url(app, csv_link)
    assert status == 200 and name in headers["Content-Disposition"] and len(pd.read_csv(io.StringIO(body))) == rows > 0
    status, _, body = get_url(app, html.unescape(re.search(r'href="([^"]*)" data-download="parquet"', text).group(1)))
    table = pq.read_table(io.BytesIO(body))
    assert table.num_rows == rows and table.schema.metadata[b"hindsight_filter"].decode().startswith(path)
    assert get(app, path, **params, format="xlsx")[0] == 400


def test_the_judges_verdicts_filter_the_judged_samples(app, demo):
    link = cell_links(app, metric="delta_htr", by="model")[0]
    text = get_url(app, link)[2]
    verdicts = [html.unescape(v) for v in re.findall(r'<option value="(Acc [^"]+)"', text)]
    judged = query(demo, """select count(*) from fct_answer_pairs as p
                            left join fct_answers as f on f.response_id = p.full_response_id
                            left join fct_answers as m on m.response_id = p.masked_response_id
                            where p.model = 'sim:hindsight@0.3' and p.prompt_variant = 'standard'
                            and coalesce(p.paired_judge_model, f.judge_model, m.judge_model) is not null""")[0][0]
    count = re.compile(r"(\d+) samples match")
    shown = sum(int(count.search(get_url(app, f"{link}&{urlencode({'f.verdict': v})}")[2]).group(1)) for v in verdicts)
    assert verdicts and shown == judged > 0
