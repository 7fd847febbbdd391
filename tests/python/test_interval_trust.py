"""How far to trust an interval (issue 70), against hand computations: the coverage table and its
threshold, the few-cases flags and their words, a difference's stratified SE and its studentized
interval replicate by replicate, the p each interval inverts to, Holm and Benjamini-Hochberg, and the
coverage bench in CI's small setting. On the demo warehouse: tests/python/test_slices.py."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from conftest import PROJECT
from ingest.stats import bootstrap, differences, intervals, multiplicity, trust


def test_holm_and_benjamini_hochberg_by_hand():
    p = np.array([0.01, 0.04, 0.03, np.nan, 0.2])
    # Holm: sorted 0.01, 0.03, 0.04, 0.2 times 4, 3, 2, 1, running maximum
    assert multiplicity.adjusted(p, "holm") == pytest.approx([0.04, 0.09, 0.09, np.nan, 0.2], nan_ok=True)
    # BH: times 4/1, 4/2, 4/3, 4/4, running minimum from the largest: 0.04, 0.06 -> 0.0533, 0.0533, 0.2
    assert multiplicity.adjusted(p, "bh") == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, np.nan, 0.2], nan_ok=True)
    assert np.isnan(multiplicity.adjusted(np.array([np.nan, np.nan]))).all()
    assert multiplicity.adjusted(np.array([0.5, 0.5]), "holm") == pytest.approx([1.0, 1.0])      # capped at 1
    with pytest.raises(ValueError, match="unknown adjustment"):
        multiplicity.adjusted(p, "bonferroni")


def _two_cohorts(rng, cases=4, cells=3):
    questions = rng.integers(3, 9, size=(2 * cases, cells)).astype(float)
    sa = rng.binomial(questions.astype(int), 0.6).astype(float)
    sb = rng.binomial(questions.astype(int), 0.4).astype(float)
    strata = np.repeat([0, 1], cases)
    return sa, questions, sb, questions.copy(), strata


def _linearised(sa, na, sb, nb):
    est_a, est_b = sa.sum(0) / na.sum(0), sb.sum(0) / nb.sum(0)
    return (sa - na * est_a) / na.sum(0) - (sb - nb * est_b) / nb.sum(0)


def test_a_differences_se_is_the_stratified_linearised_one_by_hand():
    rng = np.random.default_rng(7)
    sa, na, sb, nb, strata = _two_cohorts(rng)
    u = _linearised(sa, na, sb, nb)
    expected = []
    for cell in range(u.shape[1]):
        variance = 0.0
        for k in (0, 1):
            values = [u[c, cell] for c in range(len(strata)) if strata[c] == k]
            mean = sum(values) / len(values)
            variance += len(values) / (len(values) - 1) * sum((v - mean) ** 2 for v in values)
        expected.append(variance ** 0.5)
    w = np.hstack([bootstrap.weights(1, "x", 4, 200), bootstrap.weights(1, "y", 4, 200)])
    got = differences.difference_statistics(sa, na, sb, nb, strata, [w])
    assert got["se"] == pytest.approx(expected, rel=1e-12)
    miller = np.sqrt((u * u).sum(0))
    assert (got["se"] > miller).all()             # the strata's factor 4/3 and their own means: larger at 4 cases a cohort
    assert got["difference"] == pytest.approx(sa.sum(0) / na.sum(0) - sb.sum(0) / nb.sum(0), rel=1e-12)


def test_a_studentized_difference_interval_replicate_by_replicate():
    """Each replicate's difference pivoted by the stratified SE of the cases it drew, computed draw by
    draw (a case drawn twice counts twice): the bootstrap-t interval differences.py forms from moments."""
    rng = np.random.default_rng(11)
    sa, na, sb, nb, strata = _two_cohorts(rng, cases=5, cells=2)
    replicates = 300
    weights = [bootstrap.weights(3, name, 5, replicates) for name in ("x", "y")]
    got = differences.difference_statistics(sa, na, sb, nb, strata, [np.hstack(weights)], "studentized")
    for cell in range(2):
        d = sa[:, cell].sum() / na[:, cell].sum() - sb[:, cell].sum() / nb[:, cell].sum()
        pivots = []
        for r in range(replicates):
            drawn = [k * 5 + c for k in (0, 1) for c in range(5) for _ in range(int(weights[k][r, c]))]
            ta, tna, tb, tnb = (sum(v[j, cell] for j in drawn) for v in (sa, na, sb, nb))
            star = ta / tna - tb / tnb
            u = {j: (sa[j, cell] - na[j, cell] * ta / tna) / tna - (sb[j, cell] - nb[j, cell] * tb / tnb) / tnb for j in drawn}
            variance = 0.0
            for k in (0, 1):
                mine = [u[j] for j in drawn if strata[j] == k]
                mean = sum(mine) / len(mine)
                variance += len(mine) / (len(mine) - 1) * sum((v - mean) ** 2 for v in mine)
            if variance > 0:
                pivots.append((star - d) / variance ** 0.5)
        t_low, t_high = np.percentile(pivots, [2.5, 97.5])
        se = got["se"][cell]
        assert (got["ci_low"][cell], got["ci_high"][cell]) == pytest.approx((d - t_high * se, d - t_low * se), rel=1e-9)


@pytest.mark.parametrize("method", intervals.METHODS)
def test_each_methods_p_is_its_interval_inverted(method):
    """significant (the interval leaves 0 out) exactly where p < 0.05, but for p within a replicate's
    resolution of the level (the interval's limits are interpolated between replicates)."""
    rng = np.random.default_rng(5)
    cases, cells = 12, 300
    questions = rng.integers(3, 9, size=(cases, cells)).astype(float)
    rates = rng.uniform(0.3, 0.7, size=cells)
    sa = rng.binomial(questions.astype(int), rates).astype(float)
    sb = rng.binomial(questions.astype(int), np.clip(rates - rng.uniform(0, 0.25, size=cells), 0.01, 1)).astype(float)
    got = differences.difference_statistics(sa, questions, sb, questions, np.zeros(cases, dtype=int),
                                            [bootstrap.weights(9, "z", cases, 2000)], method)
    significant = (got["ci_low"] > 0) | (got["ci_high"] < 0)
    clear = np.abs(got["p_value"] - 0.05) > 0.004
    assert clear.sum() > 250 and 30 < significant.sum() < 270
    assert ((got["p_value"] < 0.05) == significant)[clear].all()
    assert (got["p_value"] >= 1 / 2000).all() and (got["p_value"] <= 1).all()


def test_the_percentile_p_counts_the_replicates_on_each_side_of_zero():
    replicates = np.array([[-0.2], [0.1], [0.3], [0.0], [0.5]])
    # at most 0: two of five (the one at 0 counts on both sides: a limit on it keeps 0 in); at least 0: four
    assert differences.percentile_p(replicates) == pytest.approx([2 * 2 / 5])
    assert differences.percentile_p(np.array([[0.1], [0.2], [np.nan]])) == pytest.approx([0.0])


def test_the_threshold_is_the_smallest_size_from_which_coverage_holds():
    table = pd.DataFrame({"ci_method": "percentile", "kind": "single", "cases": [2, 4, 8, 16],
                          "mean_coverage": [0.5, 0.95, 0.90, 0.93]})
    derived = trust.derive(table, 0.925)
    # 4 holds but 8 falls short again: it holds from 16
    assert derived["min_cases"].unique().tolist() == [16]
    assert derived[["from_cases", "below_cases"]].values.tolist()[0] == [2, 4]
    assert pd.isna(derived["below_cases"].iloc[-1])
    never = trust.derive(table.assign(mean_coverage=[0.5, 0.6, 0.7, 0.8]), 0.925)
    assert never["min_cases"].isna().all()
    assert "it holds at no size measured" in trust.caution_text(20, "percentile", "single", never)


def test_the_flags_and_their_words():
    table = trust.derive(pd.DataFrame({"ci_method": "bca", "kind": "paired", "cases": [2, 4, 8, 16],
                                       "mean_coverage": [0.4696, 0.7598, 0.8634, 0.9338]}), 0.925)
    few, cautions = trust.flags(np.array([0, 1, 2, 5, 15, 16, 400]), "bca", "paired", table)
    assert few.tolist() == [False, True, True, True, True, False, False]
    assert cautions[1] == trust.ONE_CASE
    assert cautions[3] == ("few cases (5): a bca interval over 4-7 cases covered 76%, not 95%, "
                           "in the coverage bench (it holds from 16)")
    assert cautions[4].startswith("few cases (15): a bca interval over 8-15 cases covered 86%")
    assert trust.significance_word(True, True) == "yes (few cases)"
    assert trust.significance_word(np.bool_(True), np.bool_(False)) == "yes"
    assert trust.significance_word(None, True) == "no" and trust.significance_word(float("nan"), True) == "no"


def test_the_seed_is_the_table_the_docs_publish():
    """seeds/interval_coverage.csv, the table the flags read, is the one docs/clinical-benchmark.md shows
    (both from one run of bench/bench_coverage.py --write-seed), and min_cases there is the rule's."""
    seed = pd.read_csv(trust.SEED)
    text = (PROJECT / "docs" / "clinical-benchmark.md").read_text()
    section = text[text.index("## Too few cases"):]
    rows = re.findall(r"^\| `(\w+)` \| (\w+) \| ([^\n]+) \| (\d+|none) \|$", section, re.M)
    assert len(rows) == 9
    sizes = [int(n) for n in re.search(r"^\| method \| kind \| ([^\n]+) \| from \|$", section, re.M).group(1).split(" | ")]
    derived = trust.seed_table().groupby(["ci_method", "kind"])["min_cases"].first()
    for method, kind, figures, min_cases in rows:
        shown = [float(v.strip("*% ")) / 100 for v in figures.split(" | ")]
        mine = seed[(seed["ci_method"] == method) & (seed["kind"] == kind)].set_index("cases")["mean_coverage"]
        assert mine.loc[sizes].to_numpy() == pytest.approx(shown, abs=0.00051)       # shown to a tenth of a point
        assert str(int(derived[method, kind])) == min_cases


def test_the_coverage_bench_runs_in_ci_in_its_small_setting(tmp_path):
    out = tmp_path / "coverage.json"
    done = subprocess.run([sys.executable, str(PROJECT / "bench" / "bench_coverage.py"), "--small", "--out", str(out)],
                          capture_output=True, text=True, cwd=PROJECT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["datasets_per_setting"] == 100 and figures["min_coverage"] == 0.925
    for key, found in figures["trust"].items():
        coverage = {int(n): c for n, c in found["mean_coverage_by_cases"].items()}
        # two cases: a bootstrap reweights two fixed cases, and its coverage collapses for every method
        assert coverage[2] < 0.7, key
        assert coverage[40] > 0.88, key
        assert found["min_cases"] in (8, 40), key
    assert {r["metric"] for r in figures["rows"]} >= {"acc", "delta_htr", "acc_difference", "acc_difference_null"}
