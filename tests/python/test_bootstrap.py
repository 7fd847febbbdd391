"""The case-clustered bootstrap: draws, estimator and calibration."""
import numpy as np
import pytest

from ingest.stats import bootstrap, metric_estimates


def test_draws_are_a_fixed_function_of_seed_cohort_replicate_and_draw():
    # pinned values: a change here changes every published interval
    key = bootstrap.cohort_key("sepsis")
    assert key == 55466319
    assert [int(bootstrap.case_index(2026, key, r, j, 40)) for r, j in [(0, 0), (0, 1), (1999, 39)]] == [16, 12, 2]
    w = bootstrap.weights(2026, "sepsis", 40, 2000)
    assert w.shape == (2000, 40) and (w.sum(axis=1) == 40).all()
    assert not np.array_equal(w, bootstrap.weights(2027, "sepsis", 40, 2000))
    assert not np.array_equal(w, bootstrap.weights(2026, "glp1", 40, 2000))


def test_draws_are_uniform_multinomial():
    w = bootstrap.weights(7, "x", 50, 20000)
    assert abs(w.mean() - 1.0) < 1e-12
    assert w.var() == pytest.approx(1 - 1 / 50, rel=0.02)          # multinomial(n, 1/n) variance
    assert (w == 0).mean() == pytest.approx((1 - 1 / 50) ** 50, rel=0.02)


def test_matrix_estimator_equals_a_loop_over_replicates():
    rng = np.random.default_rng(1)
    n_cases, n_cells = 12, 3
    counts = rng.integers(0, 4, size=(n_cases, n_cells)).astype(float)
    sums = np.minimum(counts, rng.integers(0, 4, size=(n_cases, n_cells)))
    w = bootstrap.weights(3, "c", n_cases, 500)
    stats = bootstrap.cell_statistics(sums, counts, w)
    for cell in range(n_cells):
        replicates = []
        for r in range(500):
            cases = np.repeat(np.arange(n_cases), w[r].astype(int))
            n = counts[cases, cell].sum()
            if n:
                replicates.append(sums[cases, cell].sum() / n)
        assert stats["ci_low"][cell] == pytest.approx(np.percentile(replicates, 2.5), abs=1e-12)
        assert stats["ci_high"][cell] == pytest.approx(np.percentile(replicates, 97.5), abs=1e-12)
        assert stats["n_finite_replicates"][cell] == len(replicates)
        assert stats["estimate"][cell] == pytest.approx(sums[:, cell].sum() / counts[:, cell].sum())
        # Miller's clustered SE written out
        mean = sums[:, cell].sum() / counts[:, cell].sum()
        se = np.sqrt(((sums[:, cell] - counts[:, cell] * mean) ** 2).sum()) / counts[:, cell].sum()
        assert stats["se_clustered"][cell] == pytest.approx(se)
        assert stats["mde_80"][cell] == pytest.approx(2.8015852 * se, rel=1e-6)


def test_planted_rate_is_recovered_and_the_95_percent_ci_covers_it_about_95_percent_of_the_time():
    """Clustered data: each case has its own trap propensity around the planted rate."""
    truth, n_cases, per_case, repeats = 0.3, 30, 8, 300
    rng = np.random.default_rng(2026)
    covered, estimates, ses, boot_sds = 0, [], [], []
    for repeat in range(repeats):
        propensity = rng.beta(truth * 6, (1 - truth) * 6, size=n_cases)   # mean 0.3, between-case spread
        values = rng.random((n_cases, per_case)) < propensity[:, None]
        sums = values.sum(axis=1, keepdims=True).astype(float)
        counts = np.full((n_cases, 1), float(per_case))
        w = bootstrap.weights(repeat, "sim", n_cases, 400)
        stats = bootstrap.cell_statistics(sums, counts, w)
        covered += stats["ci_low"][0] <= truth <= stats["ci_high"][0]
        estimates.append(stats["estimate"][0])
        ses.append(stats["se_clustered"][0])
        boot_sds.append(np.std((w @ sums)[:, 0] / (w @ counts)[:, 0]))
    coverage = covered / repeats
    assert 0.90 <= coverage <= 0.985, coverage
    assert np.mean(estimates) == pytest.approx(truth, abs=0.01)
    # the analytic clustered SE agrees with the bootstrap spread and with the spread across repeats
    assert np.mean(ses) == pytest.approx(np.mean(boot_sds), rel=0.1)
    assert np.mean(ses) == pytest.approx(np.std(estimates), rel=0.15)


def test_shared_weights_are_the_draws_computed_once_and_read_only():
    shared = bootstrap.shared_weights(11, "shared", 30, 200)
    assert np.array_equal(shared, bootstrap.weights(11, "shared", 30, 200))
    assert bootstrap.shared_weights(11, "shared", 30, 200) is shared          # the two estimator models share it
    assert not shared.flags.writeable


def test_cached_weights_are_read_back_by_the_next_build_and_redrawn_when_damaged(tmp_path, monkeypatch):
    """The draws kept beside a warehouse: the next process (lru cache cleared) reads them instead of
    drawing; a file cut short, of another shape or whose replicates do not draw n cases is drawn again
    and replaced; a folder that cannot be written costs only the draws."""
    drawn = bootstrap.weights(5, "kept", 300, 400)
    first = bootstrap.shared_weights(5, "kept", 300, 400, tmp_path)
    path = bootstrap.cached_weights_path(tmp_path, 5, "kept", 300, 400)
    assert np.array_equal(first, drawn) and path.exists()
    assert np.load(path).dtype == np.uint8             # multiplicities, stored small

    def no_draws(*args, **kwargs):
        raise AssertionError("drew again instead of reading the kept draws")

    bootstrap._shared.cache_clear()
    with monkeypatch.context() as patch:
        patch.setattr(bootstrap, "weights", no_draws)
        again = bootstrap.shared_weights(5, "kept", 300, 400, tmp_path)
    assert np.array_equal(again, drawn) and again.dtype == np.float64 and not again.flags.writeable

    stored = np.load(path)
    one_more = stored.copy()
    one_more[3, 0] += 1                                  # replicate 3 draws n + 1 cases
    damages = {"cut short": lambda: path.write_bytes(path.read_bytes()[:200]),
               "another shape": lambda: np.save(path, stored[:, :10]),
               "a replicate of n + 1 draws": lambda: np.save(path, one_more)}
    for why, damage in damages.items():
        damage()
        bootstrap._shared.cache_clear()
        assert np.array_equal(bootstrap.shared_weights(5, "kept", 300, 400, tmp_path), drawn), why
        assert np.array_equal(np.load(path), stored), why                # replaced by the right draws

    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder should be")
    bootstrap._shared.cache_clear()
    assert np.array_equal(bootstrap.shared_weights(5, "kept", 300, 400, blocked / "bootstrap"), drawn)


def test_replicate_counts_are_one_product_per_distinct_count_column():
    """Cells answered on the same questions share their per-case counts: their replicate counts come
    from one product per distinct column, exactly the full product's; a column that differs in one
    case is its own."""
    rng = np.random.default_rng(5)
    base = rng.integers(0, 5, size=(30, 3)).astype(float)
    counts = base[:, [0, 1, 0, 2, 1, 0, 0, 2, 1, 0]]
    counts[7, 9] += 1                                  # the last column differs from column 0 in one case
    first, inverse = bootstrap.distinct_columns(counts)
    assert len(first) == 4 and np.array_equal(counts[:, first][:, inverse], counts)
    assert inverse[0] == inverse[2] == inverse[5] and inverse[9] not in (inverse[0], inverse[1], inverse[3])
    w = bootstrap.weights(3, "c", 30, 400)
    assert np.array_equal(bootstrap.replicate_totals(w, counts), w @ counts)


@pytest.mark.parametrize("method", ["percentile", "bca", "studentized"])
def test_a_block_of_cells_gives_the_numbers_of_the_whole_cohort_whatever_the_blocks(method):
    """block_estimates (what a Spark task runs) draws its replicates again a block at a time: any block
    of replicates and any block of cells give exactly the statistics of cell_statistics on the cohort's
    whole draws, which DuckDB's models compute."""
    rng = np.random.default_rng(4)
    n_cases, n_cells = 37, 9
    counts = rng.integers(0, 4, (n_cases, n_cells)).astype(float)
    sums = np.minimum(counts, rng.integers(0, 4, (n_cases, n_cells))) * 0.5
    whole = bootstrap.cell_statistics(sums, counts, bootstrap.weights(2026, "blocks", n_cases, 300), method=method)
    case, cell = np.nonzero(counts)                        # one row per cell and case with questions
    for cells_per_block, replicate_block in [(9, 300), (4, 7), (1, 1)]:
        for first in range(0, n_cells, cells_per_block):
            mine = (cell >= first) & (cell < first + cells_per_block)
            found = metric_estimates.block_estimates("blocks", n_cases, cell[mine] + 100, case[mine], sums[case[mine], cell[mine]],
                                                     counts[case[mine], cell[mine]], counts[case[mine], cell[mine]], 300, 2026,
                                                     method, replicate_block)
            columns = found["cell_id"] - 100
            for name in ["estimate", "ci_low", "ci_high", "se_clustered", "n_questions", "n_cases", "n_finite_replicates"]:
                assert np.array_equal(found[name], whole[name][columns], equal_nan=True), (name, cells_per_block, replicate_block)
