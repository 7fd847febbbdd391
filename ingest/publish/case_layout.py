"""Per-case sums of a slice's cells as the bootstrap reads them (hindsight metrics, --compare)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ingest.stats import bootstrap

REPLICATE_BLOCK = 256


class CaseLayout:
    """Per-case sums as (cases x cells) matrices, the cases of the cohorts present stacked in the
    bootstrap's order, and the replicates' weights of those cohorts in the same order: replicate r
    draws every cohort's cases as agg_metrics' replicate r does."""

    def __init__(self, numbering: pd.DataFrame, cohort_id: np.ndarray, case_index: np.ndarray, cell: np.ndarray, width: int):
        self.sizes = numbering.groupby("cohort_id")["n_cases"].first()
        self.names = numbering.groupby("cohort_id")["cohort"].first()
        self.present = np.unique(cohort_id)                   # only the cohorts the slice has cases of
        offsets = np.zeros(len(self.sizes), dtype=np.int64)
        offsets[self.present] = np.cumsum([0] + [int(self.sizes[c]) for c in self.present[:-1]])
        self.total, self.width = int(sum(int(self.sizes[c]) for c in self.present)), width
        self.position = (offsets[cohort_id] + case_index) * width + cell

    def summed(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.position, weights=values.astype(np.float64),
                           minlength=self.total * self.width).reshape(self.total, self.width)

    def strata(self) -> np.ndarray:
        """Each stacked case row's stratum (its cohort among those present, 0..K-1): the bootstrap's strata."""
        return np.repeat(np.arange(len(self.present)), [int(self.sizes[c]) for c in self.present])

    def replicate_blocks(self, seed: int, replicates: int):
        weights = [bootstrap.shared_weights(seed, self.names[c], int(self.sizes[c]), replicates) for c in self.present]
        return (np.hstack([w[start:start + REPLICATE_BLOCK] for w in weights]) for start in range(0, replicates, REPLICATE_BLOCK))
