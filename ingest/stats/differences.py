"""The difference of two arms' ratio estimates on the same cases, with its case-clustered interval by
any of the build's methods (`hindsight metrics --compare`, bench/bench_coverage.py).

Arm X's estimate is sum_c S_Xc / sum_c N_Xc; the difference d = est_A - est_B. Replicate r weights
case c by its multiplicity w_rc in both arms at once (the draws of fct_bootstrap_samples, stratified
by cohort), so what the two arms share cancels.

The clustered SE is the stratified linearised one, the bootstrap's own design: with
u_c = (S_Ac - N_Ac est_A) / N_A - (S_Bc - N_Bc est_B) / N_B,
    Var = sum_k n_k / (n_k - 1) sum_{c in k} (u_c - mean_k u)^2
over the cases c of each cohort k (n_k of them, those without a row in the cell count with u_c = 0, as
the bootstrap draws them too). Miller's sqrt(sum_c u_c^2) ignores the strata and has no small-sample
factor: at 4 cases a cohort it is 13-15% smaller.

Intervals, from the same replicates:
- percentile: the 2.5th and 97.5th percentiles of the replicate differences;
- bca: BCa, acceleration from the jackknife that leaves a case out of both arms;
- studentized: each replicate's difference pivoted by its own stratified SE (the weighted form of the
  one above: a quadratic form in four per-case sums, from ten weighted products per cohort).

p_value is the interval inverted (two-sided): below 0.05 exactly where the method's interval at that
level leaves 0 out, up to the interpolation between replicates. ingest/stats/multiplicity.py adjusts
it across a comparison's cells.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ingest.stats import intervals
from ingest.stats.intervals import ndtr, ndtri

# the ten distinct products of the per-case vector v = (S_A, N_A, S_B, N_B): (i, j) with i <= j
PAIRS = [(i, j) for i in range(4) for j in range(i, 4)]


def _quadratic(x: list[np.ndarray], products: dict) -> np.ndarray:
    """x' M x for the symmetric M whose (i, j) entries are PRODUCTS."""
    total = 0
    for i, j in PAIRS:
        total = total + (1 if i == j else 2) * x[i] * x[j] * products[i, j]
    return total


def _coefficients(totals: list[np.ndarray]) -> list[np.ndarray]:
    """u_c = x . v_c: x = (1/N_A, -est_A/N_A, -1/N_B, est_B/N_B)."""
    s_a, n_a, s_b, n_b = totals
    est_a, est_b = s_a / n_a, s_b / n_b
    return [1 / n_a, -est_a / n_a, -1 / n_b, est_b / n_b]


def _stratified_variance(x, per_stratum, sizes) -> np.ndarray:
    """sum_k f_k (sum_c w u_c^2 - (sum_c w u_c)^2 / n_k), f_k = n_k / (n_k - 1); a cohort of one case
    has no spread to give."""
    variance = 0
    for (linear, products), n in zip(per_stratum, sizes):
        if n < 2:
            continue
        first = sum(x[i] * linear[i] for i in range(4))
        variance = variance + n / (n - 1) * (_quadratic(x, products) - first * first / n)
    return np.maximum(variance, 0)


def difference_statistics(sa: np.ndarray, na: np.ndarray, sb: np.ndarray, nb: np.ndarray, strata: np.ndarray,
                          blocks: Iterable[np.ndarray], method: str = "percentile") -> dict[str, np.ndarray]:
    """Per cell: est_A, est_B, the difference, its stratified SE, interval by METHOD and two-sided p.

    sa, na, sb, nb: (cases x cells) per-case sums of values and numbers of questions of each arm;
    strata: each case row's cohort (0..K-1); blocks: consecutive (replicates x cases) multiplicities."""
    vectors = [sa, na, sb, nb]
    stratum_rows = [np.flatnonzero(strata == k) for k in range(int(strata.max()) + 1 if len(strata) else 0)]
    sizes = [len(rows) for rows in stratum_rows]
    squares = {(i, j): vectors[i] * vectors[j] for i, j in PAIRS}
    with np.errstate(invalid="ignore", divide="ignore"):
        totals = [v.sum(axis=0) for v in vectors]
        est_a, est_b = totals[0] / totals[1], totals[2] / totals[3]
        difference = est_a - est_b
        x = _coefficients(totals)
        per_stratum = [([v[rows].sum(axis=0) for v in vectors], {p: squares[p][rows].sum(axis=0) for p in PAIRS})
                       for rows in stratum_rows]
        se = np.sqrt(_stratified_variance(x, per_stratum, sizes))
        replicate_differences, replicate_se = [], []
        for block in blocks:
            replicate_totals = [block @ v for v in vectors]
            replicate_differences.append(replicate_totals[0] / replicate_totals[1] - replicate_totals[2] / replicate_totals[3])
            if method == "studentized":
                xr = _coefficients(replicate_totals)
                weighted = [([block[:, rows] @ v[rows] for v in vectors], {p: block[:, rows] @ squares[p][rows] for p in PAIRS})
                            for rows in stratum_rows]
                replicate_se.append(np.sqrt(_stratified_variance(xr, weighted, sizes)))
    replicates = np.vstack(replicate_differences) if replicate_differences else np.zeros((0, len(difference)))
    if method == "percentile":
        low, high = intervals.percentile(replicates)
        p = percentile_p(replicates)
    elif method == "bca":
        jackknife = _jackknife(vectors, totals)
        low, high = intervals.bca_from_jackknife(difference, replicates, jackknife)
        p = bca_p(difference, replicates, jackknife)
    elif method == "studentized":
        low, high, p = _studentized(difference, se, replicates, np.vstack(replicate_se))
    else:
        raise ValueError(f"unknown ci_method {method!r}: use one of {', '.join(intervals.METHODS)}")
    finite = np.isfinite(replicates).sum(axis=0)
    # B replicates resolve p no finer than 1/B: none on the other side of 0 is p <= 1/B, not 0
    p = np.where(finite > 0, np.maximum(p, 1 / np.maximum(finite, 1)), np.nan)
    return {"estimate_a": est_a, "estimate_b": est_b, "difference": difference, "se": se, "ci_low": low, "ci_high": high,
            "p_value": p, "n_finite_replicates": finite}


def _jackknife(vectors, totals) -> np.ndarray:
    """(cells x cases) differences with case c left out of both arms; NaN where c has no row in the cell."""
    sa, na, sb, nb = (np.array(v.T, order="C") for v in vectors)
    ta, tna, tb, tnb = totals
    with np.errstate(invalid="ignore", divide="ignore"):
        left_out = (ta[:, None] - sa) / (tna[:, None] - na) - (tb[:, None] - sb) / (tnb[:, None] - nb)
    return np.where(((na > 0) | (nb > 0)) & np.isfinite(left_out), left_out, np.nan)


def _shares(values: np.ndarray, point) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the shares of finite values at most and at least POINT, a value within
    intervals.TIE of it counted in both: a limit that lands on a tie touches POINT, so the interval
    keeps it (discrete metrics put many replicates exactly on 0)."""
    finite = np.isfinite(values)
    tie = (np.abs(values - point) <= intervals.TIE) & finite
    with np.errstate(invalid="ignore", divide="ignore"):
        count = finite.sum(axis=0)
        return (((values < point) & finite).sum(axis=0) + tie.sum(axis=0)) / count, \
            (((values > point) & finite).sum(axis=0) + tie.sum(axis=0)) / count


def _two_sided(low_tail: np.ndarray, high_tail: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, 2 * np.minimum(low_tail, high_tail))


def percentile_p(replicates: np.ndarray) -> np.ndarray:
    """The percentile interval inverted: its lower limit is above 0 while the share of replicates at
    most 0 is below the level, its upper limit below 0 while the share at least 0 is."""
    return _two_sided(*_shares(replicates, 0.0))


def bca_p(estimate: np.ndarray, replicates: np.ndarray, jackknife: np.ndarray) -> np.ndarray:
    """The BCa interval inverted: the nominal level whose adjusted level puts a limit at 0. With q the
    share of replicates on a limit's side of 0 and g = z(q) - z0, the limit is 0 at z = g / (1 + a g) - z0."""
    z0, acceleration = intervals.bias_and_acceleration(estimate, replicates, jackknife)
    finite = np.maximum(np.isfinite(replicates).sum(axis=0), 1)
    at_most, at_least = _shares(replicates, 0.0)
    tails = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for share, lower in ((at_most, True), (1 - at_least, False)):
            g = ndtri(np.clip(share, 0.5 / finite, 1 - 0.5 / finite)) - z0
            level = ndtr(g / (1 + acceleration * g) - z0)
            tails.append(level if lower else 1 - level)
        p = _two_sided(*tails)
    return np.where(np.isfinite(p), p, percentile_p(replicates))


def _studentized(estimate, se, replicates, replicate_se):
    """Bootstrap-t limits (intervals.bootstrap_t) and p: the share of pivots beyond the observed t; where no
    replicate has a spread to pivot by, the percentile limits and p."""
    low, high, pivots, ok = intervals.bootstrap_t(estimate, se, replicates, replicate_se)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = estimate / se
    # the interval leaves 0 out where the observed t lies beyond t*'s quantiles: p is t*'s two-sided share
    at_most, at_least = _shares(pivots, np.where(ok, observed, 0.0))
    return low, high, np.where(ok, _two_sided(at_least, at_most), percentile_p(replicates))
