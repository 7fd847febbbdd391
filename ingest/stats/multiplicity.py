"""Significance adjusted across the cells of one comparison (a family), so that a comparison over 12
cells does not find a difference in one of them by chance alone as often as not.

- holm (Holm 1979): controls the family-wise error rate, under any dependence between the cells.
  Sorted p_(1) <= ... <= p_(m): adjusted p_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).
- bh (Benjamini and Hochberg 1995): controls the false discovery rate (for independent or positively
  dependent cells). adjusted p_(i) = min_{j >= i} min(1, m / j p_(j)).

Cells without a p (no interval) are not tested and not counted in m.
"""
from __future__ import annotations

import numpy as np

ADJUSTMENTS = ("holm", "bh")
NAMES = {"holm": "Holm-adjusted", "bh": "Benjamini-Hochberg-adjusted"}
LEVEL = 0.05


def adjusted(p: np.ndarray, method: str = "holm") -> np.ndarray:
    """P adjusted by METHOD within the one family P is; NaN stays NaN."""
    p = np.asarray(p, dtype=float)
    out = np.full(len(p), np.nan)
    tested = np.flatnonzero(np.isfinite(p))
    m = len(tested)
    if not m:
        return out
    order = tested[np.argsort(p[tested], kind="stable")]
    ranked = p[order]
    if method == "holm":
        values = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    elif method == "bh":
        values = np.minimum.accumulate(np.minimum(1.0, m / np.arange(1, m + 1) * ranked)[::-1])[::-1]
    else:
        raise ValueError(f"unknown adjustment {method!r}: use one of {', '.join(ADJUSTMENTS)}")
    out[order] = values
    return out
