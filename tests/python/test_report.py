"""`hindsight report` without a browser: its numbers agree with the marts, its
queries read public marts only, and it fails clearly or degrades gracefully."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from html.parser import HTMLParser

import pytest
import sqlglot
from sqlglot import exp

from conftest import assert_dbt_passed, hindsight, query
from ingest.db import connect
from ingest.errors import InputError
from ingest.publish import figures, report
from ingest.publish.marts import public_marts


class Tables(HTMLParser):
    """The metrics tables of the report: {summary text: [[cell, ...], ...]}."""

    def __init__(self):
        super().__init__()
        self.tables, self.summary, self.row, self.text, self.where = {}, None, None, "", None

    def handle_starttag(self, tag, attrs):
        if tag in ("summary", "td", "th"):
            self.where, self.text = tag, ""
        elif tag == "tr" and self.summary:
            self.row = []

    def handle_endtag(self, tag):
        if tag == "summary":
            self.summary = self.text.strip()
            self.tables[self.summary] = []
        elif tag in ("td", "th") and self.row is not None:
            self.row.append(self.text.strip())
        elif tag == "tr" and self.row is not None:
            self.tables[self.summary].append(self.row)
            self.row = None
        elif tag == "details":
            self.summary = None
        if tag == self.where:
            self.where = None

    def handle_data(self, data):
        if self.where:
            self.text += data


def test_the_report_tables_agree_with_agg_metrics(demo_warehouse):
    db, _, index = demo_warehouse
    parser = Tables()
    parser.feed(index.read_text())
    rows = query(db, """select cohort, model, condition, metric, visibility, estimate, ci_low, ci_high, significant, few_cases
                        from agg_metrics where prompt_variant = 'standard'""")
    labels = {("acc", "full"): "Acc full", ("acc", "masked"): "Acc masked", ("htr", "full"): "HTR full",
              ("htr", "masked"): "HTR masked", ("delta_acc", "paired"): "ΔAcc", ("delta_htr", "paired"): "ΔHTR",
              ("air", "paired"): "AIR", ("hbr", "paired"): "HBR"}
    checked = 0
    for cohort, model, condition, metric, visibility, estimate, low, high, significant, few_cases in rows:
        table = parser.tables[f"{model} — {cohort}: numbers"]
        header = table[0]
        line = next(r for r in table[1:] if r[0].rstrip("*") == condition)
        cell = line[header.index(labels[(metric, visibility)])]
        # ‡, never the bare †, where the CI excludes 0 over too few cases (every demo cell: 4 cases a cohort)
        mark = ("‡" if few_cases else "†") if significant and visibility == "paired" else ""
        expected = f"{estimate:.3f} [{low:.3f}, {high:.3f}]" + mark
        assert cell == expected, (cohort, model, condition, metric, visibility)
        checked += 1
    assert checked == len(rows) > 300
    assert "‡ marks" in index.read_text() and any(r[8] and r[9] and r[4] == "paired" for r in rows)


def test_the_missing_pairs_check_counts_each_missing_side(demo_warehouse, tmp_path):
    """Questions whose masked (or full) answers are gone count as missing that side and not as
    paired, per cohort x model x variant x condition; every other group stays complete. The build
    counts them (agg_pair_coverage), the report reads the counts."""
    import shutil

    db = tmp_path / "w.duckdb"
    shutil.copy(demo_warehouse[0], db)
    with connect(db) as con:
        gone = con.execute("""
            select distinct r.question_id from raw.responses r
            inner join main.dim_questions q on q.question_id = r.question_id
            where q.cohort = 'glp1' and r.model = 'sim:prospective' and r.condition = '2.1'
                and r.prompt_variant = 'standard' and r.visibility = 'masked'
            order by r.question_id limit 3""").fetchall()
        con.execute("""delete from raw.responses where model = 'sim:prospective' and condition = '2.1'
                       and prompt_variant = 'standard' and visibility = 'masked' and question_id in (select unnest(?))""",
                    [[q for (q,) in gone]])
        con.execute("""delete from raw.responses where model = 'sim:noise@0.2' and condition = '1.2'
                       and prompt_variant = 'standard' and visibility = 'full'""")
    # deleted raw rows need a build from scratch (docs/architecture.md, "When to run --full-refresh")
    hindsight(db, "build", "--full-refresh", "--exclude", "resource_type:test", "resource_type:unit_test")
    with connect(db) as con:
        rows = con.execute(report.analysis_sql("report_missing_pairs")).df()
    assert len(gone) == 3 and len(rows) > 10
    key = ["cohort", "model", "prompt_variant", "condition"]
    by_group = rows.set_index(key)
    masked = by_group.loc[("glp1", "sim:prospective", "standard", "2.1")]
    assert (masked.n_paired, masked.n_missing_full, masked.n_missing_masked) == (masked.n_expected - 3, 0, 3)
    for cohort in ("glp1", "sepsis"):
        full = by_group.loc[(cohort, "sim:noise@0.2", "standard", "1.2")]
        assert (full.n_paired, full.n_missing_full, full.n_missing_masked) == (0, full.n_expected, 0)
    others = rows[~rows.set_index(key).index.isin([("glp1", "sim:prospective", "standard", "2.1"),
                                                     ("glp1", "sim:noise@0.2", "standard", "1.2"),
                                                     ("sepsis", "sim:noise@0.2", "standard", "1.2")])]
    assert (others.n_paired == others.n_expected).all() and (others[["n_missing_full", "n_missing_masked"]] == 0).all().all()


def test_the_starred_conditions_are_the_strict_ones_of_dim_conditions(demo_warehouse):
    from ingest.publish import palette

    db, _, _ = demo_warehouse
    assert palette.STRICT == {c for (c,) in query(db, "select condition from dim_conditions where is_strict_masking")}
    assert palette.CONDITIONS == [c for (c,) in query(db, "select condition from dim_conditions order by condition")]


def test_report_queries_read_public_marts_only():
    names = sorted(p.stem for p in report.ANALYSES.glob("report_*.sql"))
    assert len(names) >= 12
    for name in names:
        tree = sqlglot.parse_one(report.analysis_sql(name), read="duckdb")
        ctes = {cte.alias for cte in tree.find_all(exp.CTE)}
        tables = {t.name for t in tree.find_all(exp.Table)} - ctes
        assert tables and tables <= set(public_marts()), (name, tables - set(public_marts()))


def test_a_report_query_on_a_non_mart_is_refused(tmp_path, monkeypatch):
    (tmp_path / "report_sneaky.sql").write_text("select * from {{ ref('stg_raw__responses') }}")
    (tmp_path / "report_jinja.sql").write_text("select {{ var('x') }} from {{ ref('agg_metrics') }}")
    monkeypatch.setattr(report, "ANALYSES", tmp_path)
    with pytest.raises(InputError, match="stg_raw__responses.*not a public mart"):
        report.analysis_sql("report_sneaky")
    with pytest.raises(InputError, match="Jinja other than ref"):
        report.analysis_sql("report_jinja")


def test_report_needs_a_built_warehouse(cli, warehouse, tmp_path):
    out = cli("report", "--out", tmp_path / "r", expect=2).output
    assert "warehouse file not found" in out and "Fix:" in out
    with connect(warehouse):
        pass                                    # raw tables only: nothing built yet
    out = cli("report", "--out", tmp_path / "r", expect=2).output
    assert "no published snapshot of the marts yet" in out and "hindsight build" in out
    out = cli("report", "--out", tmp_path / "r", "--live", expect=2).output
    assert "marts not built" in out and "hindsight build" in out


@pytest.mark.slow
def test_an_unanswered_warehouse_reports_what_is_missing(cli, warehouse, tmp_path):
    cli("build")
    assert_dbt_passed(warehouse)
    out = cli("report", "--out", tmp_path / "r").output
    html = (tmp_path / "r" / "index.html").read_text()
    assert "report:" in out
    assert "No scored answers in agg_metrics yet" in html and "No HindsightBench release loaded" in html
    assert 'data-kind="provenance"' in html and "B = 2000" in html


def test_a_new_report_replaces_the_old_figures_and_keeps_other_files(demo_warehouse, tmp_path):
    db, _, _ = demo_warehouse
    figures_dir = tmp_path / "figures"
    figures_dir.mkdir()
    (figures_dir / "99-figure-3.svg").write_text("<svg/>")      # a figure of an earlier, larger report
    (figures_dir / "my-notes.svg").write_text("<svg/>")         # not the report's: left alone
    index = report.write_report(db, tmp_path)
    shown = {line.split('"')[1].removeprefix("figures/") for line in index.read_text().splitlines()
             if '<img src="figures/' in line}
    on_disk = {p.name for p in figures_dir.iterdir()}
    assert on_disk == shown | {"my-notes.svg"} and "99-figure-3.svg" not in on_disk
    assert not (tmp_path / "index.html.partial").exists()
    # what the next report into this folder can copy instead of drawing: one per figure shown
    assert len(list((tmp_path / ".drawn").glob("*.svg"))) == len(shown)


class StubReport(report.Report):
    """The report's sections over fixed rows instead of a warehouse."""

    def __init__(self, out, frames: dict):
        super().__init__(None, out, ThreadPoolExecutor(1))
        self.frames = frames

    def rows(self, name):
        return self.frames[name]


def test_a_figure_with_nothing_to_show_is_one_line_not_empty_axes(tmp_path):
    import pandas as pd

    answers = pd.DataFrame({"cohort": ["c", "c"], "model": ["m", "m"], "format": ["true/false", "free response"],
                            "n_answers": [10, 4], "n_invalid": [0, 0], "invalid_share": [0.0, 0.0]})
    pairs = pd.DataFrame({"cohort": ["c"], "model": ["m"], "prompt_variant": ["standard"], "condition": ["2.1"],
                          "n_expected": [5], "n_paired": [5]})
    truncation = pd.DataFrame({"cohort": ["c", "c"], "model": ["m", "m"], "condition": ["0", "2.1"], "n_answers": [4, 10],
                               "n_truncated": [0, 0], "truncation_rate": [0.0, 0.0], "n_truncated_in_use": [0, 0]})
    frames = {"report_tts_quarantine": pd.DataFrame(), "report_invalid_answers": answers, "report_missing_pairs": pairs,
              "report_truncation": truncation, "report_context_losses": pd.DataFrame()}
    section = report.quality_section(StubReport(tmp_path, frames))
    blocks = {block.kind: block for block in section.blocks}
    assert blocks["context-losses"].table is None and blocks["context-losses"].caption.startswith("No request was lost")
    frames["report_context_losses"] = pd.DataFrame({
        "cohort": ["c", "c"], "model": ["m", "m"], "condition": ["2.1", "2.2"], "prompt_variant": ["standard"] * 2,
        "n_full_lost": [2, 1], "n_full_asked": [3, 2], "n_masked_lost": [0, 1], "n_masked_asked": [3, 2],
        "n_context_overflow": [2, 1], "n_prompt_truncated": [0, 1], "n_pairs_lost": [2, 1],
        "loss_warning": ["full lost 2 of 3, masked 0 of 3: the surviving pairs are not the pairs of the design", None]})
    lost = {b.kind: b for b in report.quality_section(StubReport(tmp_path, frames)).blocks}["context-losses"]
    assert lost.table.count("<tr") == 3 and "context window: 3; answered to a shortened prompt: 1" in lost.caption
    assert "pairs lost with them: 3" in lost.caption
    assert "lost different shares (their surviving pairs are not the pairs of the design): 1 of 2" in lost.caption
    assert blocks["invalid-answers"].figure is None
    assert blocks["invalid-answers"].caption.startswith("No invalid answers")
    assert blocks["truncated-answers"].table is None and blocks["truncated-answers"].caption == "None of 14 replies ended on the token limit."
    frames["report_truncation"] = truncation.assign(n_truncated=[0, 3], truncation_rate=[0.0, 0.3], n_truncated_in_use=[0, 1])
    cut = {b.kind: b for b in report.quality_section(StubReport(tmp_path, frames)).blocks}["truncated-answers"]
    assert "3 of 14 replies ended on the token limit (1 still in use" in cut.caption
    assert cut.table.count("<tr") == 2 and "<td>2.1</td>" in cut.table      # the header and the one cell with truncations
    (tmp_path / "figures").mkdir()
    frames["report_invalid_answers"] = answers.assign(n_invalid=[1, 0], invalid_share=[0.1, 0.0])
    stub = StubReport(tmp_path, frames)
    drawn = {b.kind: b for b in report.quality_section(stub).blocks}["invalid-answers"]
    stub.wait()
    assert drawn.figure and "1 of 14 answers invalid" in drawn.caption
    assert (tmp_path / "figures" / drawn.figure).read_text().startswith("<?xml")


def test_a_figure_drawn_from_the_same_rows_is_reused_and_a_changed_one_redrawn(tmp_path):
    import pandas as pd

    (tmp_path / "figures").mkdir()
    rows = pd.DataFrame({"cohort": ["c", "c", "c"], "relpos": [0.1, 0.5, 0.9]})
    first = StubReport(tmp_path, {})
    block = first.figure("figure-d1", "t", ["report_relpos_ecdf"], partial(figures.relpos_ecdf, rows), "alt")
    first.wait()
    drawn = (tmp_path / "figures" / block.figure).read_bytes()
    assert len(first.pending) == 1 and drawn.startswith(b"<?xml")

    (tmp_path / "figures" / block.figure).unlink()
    again = StubReport(tmp_path, {})
    shifted = rows.set_axis([7, 8, 9])        # the same rows at other index labels (another model's rows came first)
    same = again.figure("figure-d1", "t", ["report_relpos_ecdf"], partial(figures.relpos_ecdf, shifted), "alt")
    again.wait()
    assert again.pending == [] and (tmp_path / "figures" / same.figure).read_bytes() == drawn     # copied, not drawn

    changed = StubReport(tmp_path, {})
    other = changed.figure("figure-d1", "t", ["report_relpos_ecdf"],
                           partial(figures.relpos_ecdf, rows.assign(relpos=[0.2, 0.5, 0.9])), "alt")
    changed.wait()
    assert len(changed.pending) == 1 and (tmp_path / "figures" / other.figure).read_bytes() != drawn
    assert len(list((tmp_path / ".drawn").glob("*.svg"))) == 1       # the unused one is forgotten
