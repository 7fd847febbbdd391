"""Confidence intervals from one set of case-clustered bootstrap draws.

Every method reads the same replicates (replicate r reweights case c by its
multiplicity w[r, c]), so switching methods never redraws:

- `percentile` (the paper's): the 2.5th and 97.5th percentiles of the
  replicate estimates.
- `bca`: bias-corrected and accelerated (Efron 1987). Bias z0 from the share
  of replicates below the estimate (ties within 1e-12 count half), acceleration from the jackknife over
  cases (leave one case out: (S - S_c) / (N - N_c)), then percentiles at the
  adjusted levels.
- `studentized`: the bootstrap-t over cases. Each replicate's estimate is
  pivoted by its own clustered SE (Miller's, the one agg_metrics reports);
  the interval is estimate - t*[97.5%] se, estimate - t*[2.5%] se (the percentile limits
  where no replicate has a spread to pivot by, e.g. every value of the cell equal).

A cell's estimate is a ratio of sums, sum_c S_c / sum_c N_c (a question-
weighted mean). Replicates that drew none of a cell's cases (N = 0) are left
out, as the percentile method always did. bench/bench_coverage.py measures
each method's coverage; docs/clinical-benchmark.md ("Intervals: which ci_method to choose") says which to use when.
"""
from __future__ import annotations

from statistics import NormalDist

import numpy as np

_NORMAL = NormalDist()
ndtr = np.vectorize(_NORMAL.cdf, otypes=[float])           # one call per cell, not per replicate
ndtri = np.vectorize(_NORMAL.inv_cdf, otypes=[float])

METHODS = ("percentile", "bca", "studentized")
READS_CASE_SUMS = ("bca", "studentized")       # the others read the replicates only
ALPHA = 0.025
TIE = 1e-12          # |replicate - estimate| at most this is a tie in BCa's bias (metrics lie in [-1, 1])


def quantiles(values: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Per column of `values` (replicates x cells), the quantile at that column's level (linear
    interpolation, NaN replicates left out; NaN where a column has none)."""
    ordered = np.sort(values, axis=0)                       # NaN sort last
    finite = np.isfinite(values).sum(axis=0)
    position = np.clip(levels, 0, 1) * np.maximum(finite - 1, 0)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, np.maximum(finite - 1, 0))
    columns = np.arange(values.shape[1])
    low, high = ordered[below, columns], ordered[above, columns]
    result = low + (position - below) * (high - low)
    return np.where(finite > 0, result, np.nan)


def percentile(replicate_estimates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cells = replicate_estimates.shape[1]
    return (quantiles(replicate_estimates, np.full(cells, ALPHA)),
            quantiles(replicate_estimates, np.full(cells, 1 - ALPHA)))


def bca(estimate: np.ndarray, replicate_estimates: np.ndarray, sums: np.ndarray, counts: np.ndarray
        ) -> tuple[np.ndarray, np.ndarray]:
    """BCa limits of a ratio of sums; acceleration from the jackknife over the cases that have a question
    in the cell (leave case c out: (S - S_c) / (N - N_c))."""
    with np.errstate(invalid="ignore", divide="ignore"):
        # a cell per row, summed along it: the same bits whichever cells share the matrix
        cell_sums, cell_counts = np.array(sums.T, order="C"), np.array(counts.T, order="C")
        total_s, total_n = cell_sums.sum(axis=1), cell_counts.sum(axis=1)
        jackknife = (total_s[:, None] - cell_sums) / (total_n[:, None] - cell_counts)
        jackknife = np.where((cell_counts > 0) & np.isfinite(jackknife), jackknife, np.nan)
    return bca_from_jackknife(estimate, replicate_estimates, jackknife)


def bias_and_acceleration(estimate: np.ndarray, replicate_estimates: np.ndarray, jackknife: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    """BCa's z0 (the share of replicates below the estimate) and acceleration (JACKKNIFE: cells x cases,
    the leave-one-case-out estimates, NaN for a case not in the cell)."""
    finite = np.isfinite(replicate_estimates)
    # a replicate within TIE of the estimate is a tie: the same value summed in another order (another
    # engine, another BLAS) differs in its last bits, and discrete metrics tie often
    tie = np.abs(replicate_estimates - estimate) <= TIE
    below = ((replicate_estimates < estimate) & ~tie & finite).sum(axis=0) + 0.5 * (tie & finite).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = below / finite.sum(axis=0)
        z0 = ndtri(np.clip(share, 1e-6, 1 - 1e-6))
        deviation = np.nanmean(jackknife, axis=1)[:, None] - jackknife
        cubes, squares = np.nansum(deviation ** 3, axis=1), np.nansum(deviation ** 2, axis=1)
        acceleration = np.where(squares > 0, cubes / (6 * squares ** 1.5), 0.0)
    return z0, acceleration


def bca_from_jackknife(estimate: np.ndarray, replicate_estimates: np.ndarray, jackknife: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """BCa limits from the replicates and the leave-one-case-out estimates (any statistic: a ratio, or
    the difference of two, ingest/stats/differences.py)."""
    z0, acceleration = bias_and_acceleration(estimate, replicate_estimates, jackknife)
    levels = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for z in (ndtri(ALPHA), ndtri(1 - ALPHA)):
            adjusted = ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
            levels.append(np.where(np.isfinite(adjusted), adjusted, ndtr(z)))
    return quantiles(replicate_estimates, levels[0]), quantiles(replicate_estimates, levels[1])


def studentized(estimate: np.ndarray, se: np.ndarray, replicate_estimates: np.ndarray,
                replicate_counts: np.ndarray, moments) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap-t limits with Miller's clustered SE in every replicate:
    Var* = sum_c w_c (S_c - N_c t*)^2 / N*^2, from three products with the weights (MOMENTS:
    w @ S^2, w @ SN, w @ N^2, the caller's, so it can form them a block of replicates at a time)."""
    s2, sn, n2 = moments
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = (s2 - 2 * replicate_estimates * sn + replicate_estimates ** 2 * n2) / replicate_counts ** 2
    return bootstrap_t(estimate, se, replicate_estimates, np.sqrt(np.maximum(variance, 0)))[:2]


def bootstrap_t(estimate: np.ndarray, se: np.ndarray, replicate_estimates: np.ndarray, replicate_se: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bootstrap-t limits from each replicate's own SE (any statistic: a ratio, above, or a difference,
    ingest/stats/differences.py), and the pivots and where they were usable (for a p)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        pivots = np.where(replicate_se > 0, (replicate_estimates - estimate) / replicate_se, np.nan)
    cells = pivots.shape[1]
    t_low, t_high = quantiles(pivots, np.full(cells, ALPHA)), quantiles(pivots, np.full(cells, 1 - ALPHA))
    # no replicate with a spread (every value of the cell alike): nothing to pivot; the percentile
    # limits are the honest answer there (the estimate itself when every value is equal)
    fallback_low, fallback_high = percentile(replicate_estimates)
    studentized_ok = np.isfinite(t_low) & np.isfinite(t_high) & (se > 0)
    return (np.where(studentized_ok, estimate - t_high * se, fallback_low),
            np.where(studentized_ok, estimate - t_low * se, fallback_high), pivots, studentized_ok)


def interval(method: str, estimate: np.ndarray, se: np.ndarray, replicate_estimates: np.ndarray,
             sums: np.ndarray, counts: np.ndarray, replicate_counts: np.ndarray, moments=()) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per cell by `method`, from the same replicates (MOMENTS: studentized's, see there)."""
    if method == "percentile":
        return percentile(replicate_estimates)
    if method == "bca":
        return bca(estimate, replicate_estimates, sums, counts)
    if method == "studentized":
        return studentized(estimate, se, replicate_estimates, replicate_counts, moments)
    raise ValueError(f"unknown ci_method {method!r}: use one of {', '.join(METHODS)}")
