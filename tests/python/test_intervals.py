"""Interval methods from one set of case-clustered bootstrap replicates (issue 17): each method
recomputed from its definition, one replicate at a time, and the `ci_method` var reaching every
metric mart, its `significant` flag and the report's provenance."""
from __future__ import annotations

import shutil
from statistics import NormalDist

import numpy as np
import pytest

from conftest import hindsight, query, scalar
from ingest.stats import bootstrap, intervals


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    counts = rng.integers(5, 16, size=(40, 3)).astype(float)
    sums = rng.binomial(counts.astype(int), [0.05, 0.3, 0.6]).astype(float)
    w = bootstrap.weights(2026, "intervals", 40, 2000)
    return sums, counts, w


def by_definition(sums, counts, w, cell):
    """One cell, replicate by replicate, the textbook way."""
    s, n = sums[:, cell], counts[:, cell]
    estimate = s.sum() / n.sum()
    se = np.sqrt(((s - n * estimate) ** 2).sum()) / n.sum()
    thetas, pivots = [], []
    for weights in w:
        theta = (weights * s).sum() / (weights * n).sum()
        se_r = np.sqrt((weights * (s - n * theta) ** 2).sum()) / (weights * n).sum()
        thetas.append(theta)
        if se_r > 0:
            pivots.append((theta - estimate) / se_r)
    thetas = np.array(thetas)
    jack = np.array([(s.sum() - s[c]) / (n.sum() - n[c]) for c in range(len(s))])
    d = jack.mean() - jack
    a = (d ** 3).sum() / (6 * ((d ** 2).sum()) ** 1.5)
    z0 = NormalDist().inv_cdf(((thetas < estimate).sum() + 0.5 * (thetas == estimate).sum()) / len(thetas))
    levels = [NormalDist().cdf(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in (NormalDist().inv_cdf(0.025), NormalDist().inv_cdf(0.975))]
    t_low, t_high = np.percentile(pivots, [2.5, 97.5])
    return {"percentile": tuple(np.percentile(thetas, [2.5, 97.5])),
            "bca": tuple(np.quantile(thetas, levels)),
            "studentized": (estimate - t_high * se, estimate - t_low * se)}


@pytest.mark.parametrize("method", intervals.METHODS)
def test_each_method_equals_its_definition(data, method):
    sums, counts, w = data
    found = bootstrap.cell_statistics(sums, counts, w, method=method)
    for cell in range(sums.shape[1]):
        expected = by_definition(sums, counts, w, cell)[method]
        assert (found["ci_low"][cell], found["ci_high"][cell]) == pytest.approx(expected, abs=1e-12), (method, cell)
        assert found["estimate"][cell] == pytest.approx(sums[:, cell].sum() / counts[:, cell].sum())


@pytest.mark.parametrize("method", intervals.METHODS)
def test_a_cell_whose_values_are_all_equal_has_the_estimate_as_its_interval(data, method):
    _, counts, w = data
    found = bootstrap.cell_statistics(np.zeros_like(counts), counts, w, method=method)
    assert list(found["ci_low"]) == [0.0] * 3 and list(found["ci_high"]) == [0.0] * 3
    found = bootstrap.cell_statistics(counts.copy(), counts, w, method=method)
    assert list(found["ci_low"]) == [1.0] * 3 and list(found["ci_high"]) == [1.0] * 3


def test_an_unknown_method_is_refused(data):
    with pytest.raises(ValueError, match="unknown ci_method 'wald'"):
        bootstrap.cell_statistics(*data, method="wald")


@pytest.mark.slow
def test_ci_method_reaches_every_metric_mart(demo_warehouse, tmp_path):
    db = tmp_path / "w.duckdb"
    shutil.copy(demo_warehouse[0], db)
    marts = ("agg_metrics", "agg_metrics_by_format", "agg_metrics_by_eval_target")
    method_bound = "ci_low, ci_high, ci_method, significant, few_cases, caution"        # the flags follow the method's coverage
    before = {mart: query(db, f"select * exclude ({method_bound}) from {mart} order by all") for mart in marts}
    assert all(scalar(db, f"select string_agg(distinct ci_method) from {mart}") == "percentile" for mart in marts)
    percentile = dict(((r[0], r[1], r[2], r[3], r[4], r[5]), (r[6], r[7])) for r in query(
        db, "select cohort, model, condition, prompt_variant, metric, visibility, ci_low, ci_high from agg_metrics"))
    hindsight(db, "build", "--select", "int_metric_estimates+", "int_metric_estimates_by_eval_target+", "dim_build",
              "--vars", '{"ci_method": "studentized"}')
    for mart in marts:
        assert scalar(db, f"select string_agg(distinct ci_method) from {mart}") == "studentized"
        assert scalar(db, f"select count(*) from {mart} where significant <> coalesce(ci_low > 0 or ci_high < 0, false)") == 0
        # the estimates, SEs and counts do not depend on the interval method
        assert query(db, f"select * exclude ({method_bound}) from {mart} order by all") == before[mart]
        # flagged by studentized's own threshold (16 cases: the demo's cells of 2-8 are all below it)
        assert scalar(db, f"select count(*) from {mart} where not few_cases or caution not like '%a studentized interval%'") == 0
    changed = [key for key, low, high in ((tuple(r[:6]), r[6], r[7]) for r in query(
        db, "select cohort, model, condition, prompt_variant, metric, visibility, ci_low, ci_high from agg_metrics "
            "where ci_low is not null")) if (low, high) != pytest.approx(percentile[key])]
    assert changed
    assert scalar(db, "select ci_method from dim_build") == "studentized"
    refused = hindsight(db, "build", "--select", "int_metric_estimates", "--vars", '{"ci_method": "wald"}', expect=1)
    assert "unknown ci_method 'wald'" in refused.stdout
