"""Case-clustered bootstrap: reproducible draws and the weighted-sum estimator.

Draws come from a counter-based integer mixer (no engine RNG, no `hash()`),
so numpy here and SQL (macro `bootstrap_case_index`, model
`fct_bootstrap_samples`) give bit-identical draws on any machine. Every
intermediate value stays below 2^63: values are reduced modulo the prime
2^31 - 1 and multiplied by a constant below 2^27.

Replicate r of a cohort with n cases (ordered by case_id) draws n cases:
draw j picks case index `case_index(seed, cohort_key, r, j, n)`. A cell's
replicate estimate is the ratio sum_c w_rc S_c / sum_c w_rc N_c, where S_c
and N_c are the case's sum of per-question values and number of questions
in the cell, so all replicates of all cells are one matrix product W @ [S N].
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ingest.stats import intervals

PRIME = 2_147_483_647  # 2^31 - 1
MULTIPLIER = 73_244_475  # < 2^27: (2^31) * MULTIPLIER < 2^58
Z_975 = 1.959963984540054
Z_80 = 0.8416212335729143


def cohort_key(cohort: str) -> int:
    """First 7 hex digits of md5(cohort): a stable stream per cohort."""
    return int(hashlib.md5(cohort.encode("utf-8")).hexdigest()[:7], 16)


def mix(h):
    """Two xorshift-multiply rounds modulo 2^31 - 1 (ints or int64 arrays)."""
    for _ in range(2):
        h = ((h ^ (h >> 16)) * MULTIPLIER) % PRIME
    return h


def case_index(seed: int, key: int, replicate, draw, n: int):
    h = mix((seed % PRIME + key) % PRIME)
    h = mix((h + replicate) % PRIME)
    h = mix(mix((h + draw) % PRIME))
    return h % n


def weight_block(seed: int, key: int, n_cases: int, start: int, stop: int) -> np.ndarray:
    """Rows START..STOP-1 of the multiplicities: ((stop - start) x n_cases), regenerated from the
    counter-based draws alone, so any block of replicates can be drawn anywhere (a Spark task draws
    its own). Its temporaries are a few int64 arrays of the block's size."""
    reps = np.arange(start, stop, dtype=np.int64)[:, None]
    index = case_index(seed, key, reps, np.arange(n_cases, dtype=np.int64)[None, :], n_cases)
    flat = (reps - start) * n_cases + index
    counts = np.bincount(flat.ravel(), minlength=(stop - start) * n_cases)
    return counts.reshape(stop - start, n_cases).astype(np.float64)


def weight_blocks(seed: int, cohort: str, n_cases: int, replicates: int, block: int):
    """The multiplicities as consecutive blocks of at most BLOCK replicates, drawn one at a time: what
    the blocks hold together is weights(), whatever the block size."""
    key = cohort_key(cohort)
    for start in range(0, replicates, block):
        yield weight_block(seed, key, n_cases, start, min(start + block, replicates))


def weights(seed: int, cohort: str, n_cases: int, replicates: int, chunk: int = 256) -> np.ndarray:
    """(replicates x n_cases) multiplicities: how often each case is drawn. Chunks of replicates are
    drawn on every core (numpy's integer kernels release the GIL; each chunk fills its own rows):
    at 100x the paper's cases 1.3-1.5 s -> 0.7-0.9 s on two cores, the same numbers."""
    key = cohort_key(cohort)
    out = np.zeros((replicates, n_cases), dtype=np.float64)

    def draw(start: int) -> None:
        stop = min(start + chunk, replicates)
        out[start:stop] = weight_block(seed, key, n_cases, start, stop)

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(draw, range(0, replicates, chunk)))      # list(): a chunk's error is raised here
    return out


_SHARED_LOCK = threading.Lock()
# the draws' code: a cached file is only read back by the code that drew it
_CODE = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
_CACHE_KEEP = 8         # cached draws kept per folder (one per cohort size: an append of cases adds one)


def cached_weights_path(folder: Path, seed: int, cohort: str, n_cases: int, replicates: int) -> Path:
    key = hashlib.sha256(json.dumps([_CODE, seed, cohort, n_cases, replicates]).encode()).hexdigest()[:32]
    return folder / f"weights-{key}.npy"


def _read_cached(path: Path, n_cases: int, replicates: int) -> np.ndarray | None:
    """The multiplicities stored at PATH, or None when there is none or it is not what it should be
    (cut short, another shape or type, a replicate that does not draw n cases): then they are drawn
    again and the file replaced."""
    try:
        stored = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if stored.shape != (replicates, n_cases) or stored.dtype not in (np.uint8, np.uint16):
        return None
    if n_cases and not np.all(stored.sum(axis=1, dtype=np.int64) == n_cases):     # every replicate draws n cases
        return None
    return stored.astype(np.float64)


def _write_cached(path: Path, w: np.ndarray) -> None:
    """Best effort (a folder one cannot write only costs the next build the draws): written whole under
    another name and renamed, so a reader never sees half a file; the oldest beyond _CACHE_KEEP go."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        with open(partial, "wb") as out:
            np.save(out, w.astype(np.uint8 if w.max(initial=0) < 256 else np.uint16), allow_pickle=False)
        os.replace(partial, path)
        kept = sorted(path.parent.glob("weights-*.npy"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[_CACHE_KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


@functools.lru_cache(maxsize=4)
def _shared(seed: int, cohort: str, n_cases: int, replicates: int, cache: Path | None) -> np.ndarray:
    path = cached_weights_path(cache, seed, cohort, n_cases, replicates) if cache else None
    w = _read_cached(path, n_cases, replicates) if path else None
    if w is None:
        w = weights(seed, cohort, n_cases, replicates)
        if path:
            _write_cached(path, w)
    w.setflags(write=False)
    return w


def shared_weights(seed: int, cohort: str, n_cases: int, replicates: int, cache: Path | None = None) -> np.ndarray:
    """weights(), computed once per process and read-only: the two metric-estimate models run in one
    dbt process, often at once, and draw the same replicates of the same cohorts. With `cache` (a
    folder: the estimators use the one beside the warehouse, see weights_cache) the draws are also
    kept across builds: a build that adds a model draws nothing (at 100x the paper's cases the draws
    take 1.5 s, reading them back 0.2 s)."""
    with _SHARED_LOCK:
        return _shared(seed, cohort, n_cases, replicates, cache)


def weights_cache(database_path: str | None) -> Path | None:
    """The folder of cached draws beside a warehouse file (WAREHOUSE.cache/bootstrap); none for an
    in-memory database."""
    return Path(f"{database_path}.cache") / "bootstrap" if database_path else None


def _point_statistics(sums: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, ...]:
    """Estimate, Miller's (2024) clustered SE (Var = sum_c (S_c - N_c * mean)^2 / N^2), the number
    of questions and the number of cases with one. The deviations are formed in one buffer, in place:
    at 100x the paper's cases a cohort's matrices are 200 MB each, and every temporary was another
    one to allocate and fault in. The buffer holds a cell per row: each cell's sums are summed along
    its own contiguous row, in an order that does not depend on which other cells share the matrix
    (a Spark task's block of cells gives the numbers of the whole cohort, to the last bit)."""
    total_n = counts.sum(axis=0)
    deviations = np.array(sums.T, order="C")
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = deviations.sum(axis=1) / total_n
        for rows in range(0, len(deviations), 256):              # temporaries of 256 cells at a time
            block = slice(rows, rows + 256)
            deviations[block] -= counts.T[block] * estimate[block, None]
        np.square(deviations, out=deviations)
        se = np.sqrt(deviations.sum(axis=1)) / total_n
    return estimate, se, total_n, (counts > 0).sum(axis=0)


def distinct_columns(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(first, inverse): the first column of each distinct column of MATRIX and, per column, its
    distinct one, so that matrix == matrix[:, first][:, inverse]; None when fingerprints collide.
    Cells answered on the same questions have the same per-case counts (at 100x the paper's
    cases, 1,800 count columns of a cohort are 6 distinct ones)."""
    fingerprint = matrix.T @ np.random.default_rng(0).random(matrix.shape[0])
    _, first, inverse = np.unique(fingerprint, return_index=True, return_inverse=True)
    for start in range(0, matrix.shape[1], 256):      # exact check, a block of columns at a time
        block = slice(start, start + 256)
        if not np.array_equal(matrix[:, first[inverse[block]]], matrix[:, block]):
            return None
    return first, inverse


def replicate_totals(w: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """w @ matrix, computed once per distinct column: the replicate counts of cells that share
    their per-case counts are one product (integer multiplicities by integer counts: exact)."""
    distinct = distinct_columns(matrix)
    if distinct is None or len(distinct[0]) > matrix.shape[1] // 2:
        return w @ matrix
    first, inverse = distinct
    return (w @ matrix[:, first])[:, inverse]


def cell_statistics(sums: np.ndarray, counts: np.ndarray, w, groups: np.ndarray | None = None,
                    method: str = "percentile") -> dict[str, np.ndarray]:
    """Point estimate, CI, clustered SE and MDE per cell, and its numbers of questions and cases.

    sums, counts: (n_cases x n_cells) per-case sums of values and numbers of
    questions; w: the (replicates x n_cases) multiplicities, or an iterable of
    consecutive blocks of them (weight_blocks: memory bounded by the block, the
    same numbers, since each replicate's sums are its own row); `method` one of
    ingest.stats.intervals.METHODS (the interval from the same replicates). With `groups`
    (n_cells x n_groups, 0/1), the statistics of the groups (sums of cells)
    follow those of the cells: replicate sums of a group are sums of its
    cells' replicate sums, so no second product with w is needed.
    """
    blocks = [w] if isinstance(w, np.ndarray) else w
    estimate, se, n_questions, n_cases = _point_statistics(sums, counts)
    case_sums, case_counts = sums, counts               # what the interval reads besides the replicates
    if groups is not None:
        # the groups' point statistics on their own sums: the cases x cells matrices are joined to
        # the groups' only for an interval that reads them (a copy of 2 x 200 MB a cohort at 100x)
        group_sums, group_counts = sums @ groups, counts @ groups
        estimate, se, n_questions, n_cases = (np.concatenate(pair) for pair in zip(
            (estimate, se, n_questions, n_cases), _point_statistics(group_sums, group_counts)))
        case_sums, case_counts = ((np.hstack([sums, group_sums]), np.hstack([counts, group_counts]))
                                  if method in intervals.READS_CASE_SUMS else (None, None))
    # studentized: Miller's SE within each replicate, from three more products (of the groups' own squares)
    squares = ((case_sums * case_sums, case_sums * case_counts, case_counts * case_counts)
               if method == "studentized" else ())
    parts: list[list[np.ndarray]] = [[] for _ in range(2 + len(squares))]
    for block in blocks:
        block_sums, block_counts = block @ sums, replicate_totals(block, counts)
        if groups is not None:
            block_sums = np.hstack([block_sums, block_sums @ groups])
            block_counts = np.hstack([block_counts, block_counts @ groups])
        for part, product in zip(parts, [block_sums, block_counts, *(block @ m for m in squares)]):
            part.append(product)
    replicate_sums, replicate_counts, *moments = (np.vstack(part) if part else np.zeros((0, len(estimate)))
                                                  for part in parts)
    with np.errstate(invalid="ignore", divide="ignore"):
        replicate_estimates = replicate_sums / replicate_counts
    low, high = intervals.interval(method, estimate, se, replicate_estimates, case_sums, case_counts,
                                   replicate_counts, moments)
    return {
        "estimate": estimate, "ci_low": low, "ci_high": high,
        "n_finite_replicates": np.isfinite(replicate_estimates).sum(axis=0),
        "se_clustered": se, "mde_80": (Z_975 + Z_80) * se, "n_questions": n_questions, "n_cases": n_cases,
    }
