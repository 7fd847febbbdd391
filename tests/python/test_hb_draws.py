"""The HindsightBench bootstrap draws all replicates at once, and takes from each generator exactly the
numbers the published replicate-by-replicate loop took: the same positions, the stream left where
the loop left it, and the same CI (the published rows' test holds the release to the bit)."""
import numpy as np
import pytest

from ingest.stats.hb_audit import WarehouseDraws, drawn_positions, gap, paired_ci


def generator(kind: str):
    return np.random.default_rng(7) if kind == "release" else WarehouseDraws(5, "model:E2")


def one_by_one(rng, crisis, calm, replicates):
    """The published loop: per replicate a choice from the crisis positions, then one from the calm."""
    drawn = [(rng.choice(crisis, size=len(crisis), replace=True), rng.choice(calm, size=len(calm), replace=True))
             for _ in range(replicates)]
    return drawn, rng.choice(np.arange(50), size=5, replace=True)         # and where the stream went on


@pytest.mark.parametrize("kind", ["release", "warehouse"])
@pytest.mark.parametrize("crisis, calm", [(np.arange(11), np.arange(11, 47)), (np.arange(3, 6), np.arange(0)),
                                          (np.array([4, 1]), np.array([0, 2, 3]))])
def test_the_drawn_positions_are_the_loops(kind, crisis, calm):
    loop, then = one_by_one(generator(kind), crisis, calm, 300)
    rng = generator(kind)
    crisis_draws, calm_draws = drawn_positions(rng, crisis, calm, 300)
    assert crisis_draws.shape == (300, len(crisis)) and calm_draws.shape == (300, len(calm))
    for r, (c, m) in enumerate(loop):
        assert np.array_equal(crisis_draws[r], c) and np.array_equal(calm_draws[r], m), r
    assert np.array_equal(rng.choice(np.arange(50), size=5, replace=True), then)


@pytest.mark.parametrize("kind", ["release", "warehouse"])
def test_the_paired_ci_is_the_percentiles_of_the_replicates_gaps(kind):
    rng = np.random.default_rng(3)
    counts = {arm: (rng.integers(0, 5, 47).astype(float), rng.integers(0, 6, 47).astype(float)) for arm in "ab"}
    crisis, calm = np.arange(11), np.arange(11, 47)
    loop, _ = one_by_one(generator(kind), crisis, calm, 2000)
    stats = np.array([gap(*counts["a"], c, m) - gap(*counts["b"], c, m) for c, m in loop])
    finite = stats[np.isfinite(stats)]
    low, high, n = paired_ci(generator(kind), counts, "a", "b", crisis, calm, 2000, 1000)
    assert (low, high, n) == (*np.percentile(finite, [2.5, 97.5]), len(finite))
    # too few finite replicates: no interval
    assert paired_ci(generator(kind), counts, "a", "b", crisis, calm, 20, 21)[:2] == (None, None)
