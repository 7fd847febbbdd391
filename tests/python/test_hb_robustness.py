"""The robustness evidence of HindsightBench rows (issue 33): every number of the release's review
outputs for the shared models (window perturbation, LAP sensitivity and its paid re-probes, the
transcript audit, the serving checker's published verdicts) reproduced by the warehouse's marts;
the W offset split and the per-date cross-tab reconciled with the rows; a model appended under a new
key computed without recomputing the others; and the demo's planted fragile trigger flagged."""
from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from conftest import assert_dbt_passed, hindsight, new_warehouse, query, require_shared, scalar
from ingest.stats.hb_robustness import balanced_calm

pytestmark = pytest.mark.slow
TOLERANCE = 1e-9


def frame(db: Path, sql: str, params=None) -> list[dict]:
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute(sql, params or [])
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r)) for r in cursor.fetchall()]


def same(actual, expected) -> bool:
    if expected is None or actual is None:
        return actual is None and expected is None
    if isinstance(expected, float):
        return abs(actual - expected) <= TOLERANCE
    return actual == expected


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """The shared release loaded and built once: (warehouse, the release's review folder)."""
    root = require_shared("hindsightbench")
    db = new_warehouse(tmp_path_factory.mktemp("robust"))
    hindsight(db, "load", "hindsightbench", root)
    hindsight(db, "build")
    assert_dbt_passed(db)
    return db, root / "hindsight" / "outputs" / "review"


def test_window_perturbation_reproduces_the_release(release):
    db, review = release
    published = json.loads((review / "window_perturbation.json").read_text())
    rows = {(r["model_key"], r["perturbation"], r["endpoint"]): r for r in frame(db, "select * from agg_hb_window_perturbation")}
    checked = 0
    for model, results in published["results"].items():
        for perturbation, cell in results.items():
            for endpoint in ("E2", "E3"):
                ours, theirs = rows[(model, perturbation, endpoint)], cell[endpoint]
                assert same(ours["estimate"], theirs["est"]) and ours["sign_held"] == theirs["sign_held"], (model, perturbation)
                if "ci95" in theirs:
                    assert same(ours["ci_low"], theirs["ci95"][0]) and same(ours["ci_high"], theirs["ci95"][1]), (model, perturbation)
                    assert ours["ci_excludes_zero"] == theirs["ci_excludes_zero"]
                else:
                    assert ours["ci_low"] is None and ours["ci_high"] is None
                if "n_crisis" in cell:
                    assert (ours["n_crisis"], ours["n_calm"]) == (cell["n_crisis"], cell["n_calm"])
                checked += 1
    assert checked == 4 * 20 * 2
    assert balanced_calm([d for d in published["balanced_n11"]["dates"]], published["universe"]["crisis"]) \
        == published["balanced_n11"]["dates"]
    # perturbation none is the row itself, bit for bit (the release's reconciliation)
    drift = query(db, """select rows.model_key from agg_hb_audit_rows as rows
                         inner join agg_hb_window_perturbation as e2 on e2.model_key = rows.model_key
                             and e2.perturbation = 'none' and e2.endpoint = 'E2'
                         inner join agg_hb_window_perturbation as e3 on e3.model_key = rows.model_key
                             and e3.perturbation = 'none' and e3.endpoint = 'E3'
                         where e2.estimate is distinct from rows.e2_est or e2.ci_low is distinct from rows.e2_lo
                             or e2.ci_high is distinct from rows.e2_hi or e3.estimate is distinct from rows.e3_est
                             or e3.ci_low is distinct from rows.e3_lo or e3.ci_high is distinct from rows.e3_hi""")
    assert drift == []


def test_lap_sensitivity_reproduces_the_release_and_its_paid_reprobes(release):
    db, review = release
    rows = frame(db, "select * from agg_hb_lap_sensitivity")
    free = json.loads((review / "lap_sensitivity.json").read_text())["models"]
    for model, expected in free.items():
        reference = {r["theta"]: r for r in rows if r["model_key"] == model and r["is_reference_series"]}
        assert {str(t): r["cutoff_month"] for t, r in reference.items()} == expected["cutoff_by_theta"]
        assert all(reference[float(t)]["displacement_months"] == d for t, d in expected["displacement_months_vs_0.1"].items())
        cell, jk, delta = reference[0.1], expected["jackknife"], expected["delta_full"]
        assert cell["is_reference_cell"] and cell["samples"] == expected["n_rep_ids"] and cell["probe_lines"] == expected["n_lap_lines"]
        for ours, theirs in (("jk_k_of_n", "k_of_n"), ("jk_cutoff_min", "cutoff_min"), ("jk_cutoff_median", "cutoff_median"),
                             ("jk_cutoff_max", "cutoff_max"), ("jk_cutoff_none", "cutoff_none_count"),
                             ("jk_agree_pct", "cutoff_agree_frozen_pct"), ("jk_delta_defined_pct", "delta_defined_pct"),
                             ("jk_delta_median", "delta_median"), ("jk_status_change_pct", "status_change_pct")):
            assert same(cell[ours], jk[theirs]), (model, ours)
        assert cell["jk_seed"] == str(jk["seed"])
        assert same(cell["delta"], delta["delta"]) and same(cell["delta_t"], delta["t"]) and cell["delta_n"] == delta["n"]
    paid = json.loads((review / "lap_sensitivity_paid.json").read_text())["models"]
    cells = 0
    for model, expected in paid.items():
        for key, cell in expected["cells"].items():
            samples, temperature = key[1:].split("_t")
            series = {r["theta"]: r for r in rows if r["model_key"] == model and r["samples"] == int(samples)
                      and r["temperature"] == pytest.approx(float(temperature))}
            if not cell["collected"]:
                assert series == {}, (model, key)                  # not collected: no row, never imputed
                continue
            for theta, month in cell["cutoff_by_theta"].items():
                assert series[float(theta)]["cutoff_month"] == month, (model, key, theta)
                assert series[float(theta)]["displacement_months"] == cell["displacement_months_vs_ref"][theta]
                assert series[float(theta)]["probe_lines"] == cell["n_lines"]
            delta = expected["delta_by_series"][key]
            assert same(series[0.1]["delta"], delta["delta"]) and series[0.1]["delta_status"] == delta["status"]
            cells += 1
    assert cells == 2 * 4


def test_transcript_audit_reproduces_the_release(release):
    db, review = release
    rows = {(r["model_key"], r["arm"]): r for r in frame(db, "select * from agg_hb_transcript_audit")}
    published = json.loads((review / "w_leakage_audit.json").read_text())["models"]
    assert len(published) == 2
    for model in published:
        for arm in ("W", "M"):
            ours, theirs = rows[(model["model"], arm)], model[arm]
            assert (ours["n_files"], ours["n_dates"], ours["n_replicates"]) == (theirs["n_files"], theirs["n_dates"], theirs["n_reps"])
            for name in ("year", "event7", "event18", "monthyear"):
                assert ours[f"{name}_hits"] == theirs[f"{name}_hit"]["count"], (model["model"], arm, name)
                assert same(round(ours[f"{name}_rate"], 4), theirs[f"{name}_hit"]["rate"])
            if arm == "W":
                assert (ours["fake_year_hits"], ours["fake_year_files"]) == (theirs["fake_year_hit"]["count"], theirs["fake_year_hit"]["denom"])
                assert (ours["true_year_hits"], ours["true_year_files"]) == (theirs["true_year_hit"]["count"], theirs["true_year_hit"]["denom"])
                assert ours["anachronism_hits"] == theirs["anachronism"]["count"]
            else:
                assert ours["fake_year_hits"] is None and ours["fake_year_rate"] is None


def test_the_explorers_reply_flags_sum_to_the_releases_transcript_audit(release):
    """Each W and M reply's flags, as `hindsight explore` shows them on a decision date's replies (its
    CSV download), summed over every date: the release's published w_leakage_audit counts."""
    from ingest.explore.app import Explorer

    db, review = release
    app = Explorer(db)
    published = json.loads((review / "w_leakage_audit.json").read_text())["models"]
    for model in published:
        key = model["model"]
        dates = [d for (d,) in query(db, "select distinct decision_date from fct_hb_replies where model_key = ? and arm in ('W', 'M')", [key])]
        shown = []
        for date in dates:
            status, _, body = app.get(f"/hb/cell?model_key={key}&row_version=1&date={date}&kind=arm&format=csv")
            assert status == 200, body[:300]
            shown.append(pd.read_csv(io.BytesIO(body)))
        replies = pd.concat(shown)
        for arm in ("W", "M"):
            mine, theirs = replies[(replies["arm"] == arm) & ~replies["is_truncated"]], model[arm]
            assert len(mine) == theirs["n_files"], (key, arm)
            for name in ("year", "event7", "event18", "monthyear"):
                assert mine[f"flag_{name}"].sum() == theirs[f"{name}_hit"]["count"], (key, arm, name)
            if arm == "W":
                for name in ("fake_year", "true_year"):
                    assert (mine[f"flag_{name}"].sum(), mine[f"flag_{name}"].notna().sum()) == \
                        (theirs[f"{name}_hit"]["count"], theirs[f"{name}_hit"]["denom"]), (key, name)
                assert mine["flag_anachronism"].sum() == theirs["anachronism"]["count"], key


def test_a_release_reply_opens_whole_with_the_request_it_answered(release):
    """A release's replies have no request id: the explorer names each by its call position, and shows
    the request of that position (the release's replies answered the protocol's requests)."""
    import html
    import re

    from ingest.explore.app import Explorer

    db, _ = release
    app = Explorer(db)
    _, _, page = app.get("/hb/cell?model_key=gpt-5.4-mini&row_version=1&date=2008-09-15")
    links = [html.unescape(link) for link in re.findall(r'href="(/hb/reply\?[^"]*)" data-reply', page.decode())]
    assert len(links) == scalar(db, """select count(*) from fct_hb_replies
                                       where model_key = 'gpt-5.4-mini' and decision_date = '2008-09-15'""") > 0
    for link in links:
        status, _, body = app.get(link)
        arm, replicate = re.search(r"arm=(\w+)&replicate=(\d)", link).groups()
        user_text = scalar(db, "select user_text from fct_hb_requests where request_id = ?", [f"hb:arm:{arm}:2008-09-15:r{replicate}"])
        shown = re.search(r'data-message="user">(.*?)</pre>', body.decode(), re.S).group(1)
        assert status == 200 and html.unescape(shown) == user_text, link


def test_serving_check_reproduces_the_published_verdicts(release):
    """The fp8 row's own E2 and CI as the release's serving checker printed them, and the verdict line
    (the rule itself on the published pairs: test_hb_robustness_rules.py)."""
    db, review = release
    printed = hindsight(db, "audit", "compare", "--model-a", "qwen3.6-27b-fp8", "--model-b", "llama-3.1-70b-awq").stdout
    demo = (review / "serving_checker_demo.txt").read_text()
    assert "+19.27pp  CI95 [+10.84, +28.46]  width 17.61pp" in demo
    assert "qwen3.6-27b-fp8          +19.27pp  CI95 [+10.84, +28.46]  width 17.61pp" in printed
    assert "VERDICT: UNSTABLE - 95% CIs are disjoint" in printed
    missing = hindsight(db, "audit", "compare", "--model-a", "qwen3.6-27b-fp8", "--model-b", "nope", expect=2)
    assert "no audit row 'nope'" in missing.stderr and "Traceback" not in missing.output


def test_offset_split_and_crosstab_reconcile_with_the_rows(release):
    db, _ = release
    design = query(db, """select family, baseline, n_crisis_true, n_baseline_true, n_crisis_fake, n_baseline_fake, computable
                          from agg_hb_w_offset_split where model_key = 'gpt-5.4-mini' and baseline = 'calm' order by family""")
    # the release's asserted geometry: fwd66 6/36 true, 5/36 fake; bwd174 5/0 and 6/0, not computable
    assert design == [("all", "calm", 11, 36, 11, 36, True), ("bwd174", "calm", 5, 0, 6, 0, False),
                      ("fwd66", "calm", 6, 36, 5, 36, True)]
    assert query(db, """select count(*) from agg_hb_w_offset_split as split inner join agg_hb_audit_rows as rows
                        using (model_key) where split.family = 'all' and split.baseline = 'calm'
                        and split.e3_estimate is distinct from rows.e3_est""") == [(0,)]
    reason = scalar(db, "select any_value(not_computable_reason) from agg_hb_w_offset_split where family = 'bwd174' and baseline = 'calm'")
    assert "never imputed" in reason
    recall = query(db, """select crosstab.model_key from (
                              select model_key, count(lap_recall_hit) as n, avg(lap_recall_hit) as rate
                              from agg_hb_perdate_crosstab group by model_key) as crosstab
                          inner join agg_hb_audit_rows as rows using (model_key)
                          where crosstab.n != rows.recall_n or abs(crosstab.rate - rows.recall_hit_rate) > 1e-9""")
    assert recall == []
    assert scalar(db, "select count(*) from agg_hb_perdate_crosstab") == 4 * 240


def test_robustness_rows_mark_failed_checks_on_the_leaderboard(release, tmp_path):
    db, _ = release
    flags = dict(query(db, "select model_key, failed_checks from agg_hb_robustness"))
    # gpt-5.4-mini's E3 keeps 30% of itself without the GFC block; haiku's cutoff moves 4 months with theta
    assert flags["gpt-5.4-mini"] == "window (E3)" and "cutoff" in flags["claude-haiku-4-5"]
    assert flags["qwen3.6-27b-fp8"] is None
    hindsight(db, "leaderboard", "--out", tmp_path / "board")
    board = (tmp_path / "board.md").read_text()
    assert "| ⚠ fails: window (E3) |" in board and "| passes |" in board
    assert "failed_checks" in (tmp_path / "board.csv").read_text().splitlines()[0]


def test_an_appended_model_is_computed_alone_and_equals_its_source(release, tmp_path):
    """Incremental by model: the shared gpt-5.4-mini loaded again under a new key adds its robustness
    rows, equal to the original's (the jackknife's seed is the key's, so its draws differ), and leaves
    the other models' rows as they were computed."""
    db, _ = release
    copy = tmp_path / "w.duckdb"
    shutil.copy(db, copy)
    shutil.copytree(db.parent / f"{db.stem}.dbt-target", tmp_path / "w.dbt-target")
    root = require_shared("hindsightbench")
    clone = tmp_path / "release"
    (clone / "hindsight" / "outputs" / "bench").mkdir(parents=True)
    (clone / "macrochain").symlink_to(root / "macrochain")
    os.symlink(root / "hindsight" / "outputs" / "bench" / "gpt-5.4-mini", clone / "hindsight" / "outputs" / "bench" / "mini-again")
    incremental = ("int_hb_window_perturbation", "int_hb_audit_estimates", "int_hb_reply_parses")

    def computed():
        return {table: dict(query(copy, f"select model_key, max(computed_at) from intermediate.{table} group by 1"))
                for table in incremental}

    before = computed()
    hindsight(copy, "load", "hindsightbench", clone)
    hindsight(copy, "build")
    after = computed()
    for table in incremental:
        assert {k: v for k, v in after[table].items() if k != "mini-again"} == before[table], table
        if "gpt-5.4-mini" in before[table]:
            assert after[table]["mini-again"] > max(before[table].values()), table
    assert len(before["int_hb_audit_estimates"]) >= 4
    estimates = [r[0] for r in query(copy, "select column_name from information_schema.columns where table_name = "
                                           "'int_hb_audit_estimates' and column_name not in ('model_key', 'input_fingerprint', 'computed_at')")]
    row = f"select {', '.join(estimates)} from intermediate.int_hb_audit_estimates where model_key = ?"
    assert query(copy, row, ["gpt-5.4-mini"]) == query(copy, row, ["mini-again"])
    for mart, keys in (("agg_hb_window_perturbation", "perturbation, endpoint"), ("agg_hb_transcript_audit", "arm")):
        columns = [r[0] for r in query(copy, f"select column_name from information_schema.columns where table_name = '{mart}' "
                                             "and column_name not in ('model_key', 'row_version')")]
        original = query(copy, f"select {', '.join(columns)} from {mart} where model_key = 'gpt-5.4-mini' order by {keys}")
        again = query(copy, f"select {', '.join(columns)} from {mart} where model_key = 'mini-again' order by {keys}")
        assert original == again, mart
    cutoffs = ("select temperature, samples, theta, cutoff_month, delta from agg_hb_lap_sensitivity "
               "where model_key = ? and is_reference_series order by 1, 2, 3")
    assert query(copy, cutoffs, ["gpt-5.4-mini"]) == query(copy, cutoffs, ["mini-again"])


def test_the_demo_flags_its_planted_fragile_trigger(demo_warehouse):
    db, output, _ = demo_warehouse
    assert "robustness of each row (agg_hb_robustness" in output
    rows = {r["model_key"]: r for r in frame(db, "select * from agg_hb_robustness where model_key like 'audit-%'")}
    fragile, trigger = rows["audit-fragile"], rows["audit-trigger"]
    assert fragile["window_fails"] and "window (E2" in fragile["failed_checks"]
    assert fragile["e2_min_retained_share"] < 0.5 < trigger["e2_min_retained_share"]
    assert not trigger["window_fails"] and trigger["e2_sign_flips"] == 0
    # the serving variant with a weaker trigger: the declared pair is checked, and fails
    pair = frame(db, "select * from agg_hb_serving_stability where endpoint = 'E2'")
    assert [(p["reference_key"], p["variant_key"]) for p in pair] == [("audit-trigger", "audit-trigger-bf16")]
    assert pair[0]["verdict"] == "UNSTABLE" and rows["audit-trigger-bf16"]["serving_fails"]
    # the lap-sensitivity tier asked the re-probes: four series, reference at T 1.0 with 20 samples
    series = query(db, """select temperature, samples from agg_hb_lap_sensitivity where model_key = 'audit-trigger'
                          and theta = 0.1 order by 1, 2""")
    assert series == [(0.3, 20), (0.7, 20), (1.0, 20), (1.0, 40)]
    assert scalar(db, "select count(*) from fct_hb_requests where in_lap_sensitivity") == 3 * 258 * 20
