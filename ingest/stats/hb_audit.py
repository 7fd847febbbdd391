"""The HindsightBench audit statistics that SQL cannot do well: the stratified
bootstrap CIs of E1, E2, E3, the delta regression with HAC standard errors, and
the chance test of the LAP recall. Called by the dbt Python model
int_hb_audit_estimates (one row per model) with its refs and the protocol vars.

Bootstrap (HINDSIGHTBENCH_SPEC.md): `replicates` draws from numpy
default_rng(seed) ("release" draws) or the warehouse's counter-based draws;
each replicate draws 11 dates with replacement from the ordered crisis list,
then 36 from the calm list; the statistic is paired (gap_a - gap_b on the same
drawn lists); undefined replicates are dropped and no CI is given with fewer
than `min_finite` left; 2.5/97.5 percentiles, linear. One generator per model
row: E2 first, E3 continues its stream; E1 uses a fresh generator. delta: OLS
hit ~ 1 + signal + lap + signal x lap over PRE dates with an R net signal, a
realized direction and a LAP value; Newey-West (Bartlett, `lags` lags, no
small-sample correction); reported when n > delta_min_n and the population
variance of lap > delta_min_lap_variance; a rank-deficient design is flagged,
the pseudo-inverse value kept.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ingest.stats import bootstrap


@dataclass(frozen=True)
class AuditParams:
    """The protocol vars the estimator reads (dbt_project.yml: hb_*, bootstrap_seed); no defaults here,
    so the vars stay their one home."""
    replicates: int
    seed: int
    min_finite: int
    lags: int
    delta_min_n: int
    delta_min_lap_variance: float
    chance_alpha: float
    draws: str              # release (numpy's published stream) | warehouse (counter-based draws)
    warehouse_seed: int     # bootstrap_seed, for the warehouse draws

    VARS = {"replicates": ("hb_bootstrap_replicates", int), "seed": ("hb_bootstrap_seed", int),
            "min_finite": ("hb_min_finite_replicates", int), "lags": ("hb_hac_lags", int),
            "delta_min_n": ("hb_delta_min_n", int), "delta_min_lap_variance": ("hb_delta_min_lap_variance", float),
            "chance_alpha": ("hb_chance_alpha", float), "draws": ("hb_bootstrap_draws", str),
            "warehouse_seed": ("bootstrap_seed", int)}

    @classmethod
    def from_vars(cls, get) -> "AuditParams":
        """From a var lookup: dbt.config.get in the dbt model (values arrive as strings), a dict's get in Python."""
        return cls(**{field: cast(get(name)) for field, (name, cast) in cls.VARS.items()})

    def __post_init__(self):
        if self.draws not in ("release", "warehouse"):
            raise ValueError(f"var hb_bootstrap_draws is {self.draws!r}: use release or warehouse")


def gap(bearish, sketches, crisis, calm):
    """Bearish share over the crisis positions minus that over the calm ones (NaN if a window is empty);
    positions as a vector, or one row of them per replicate (the counts are whole numbers, so a row's
    sums are exact and a replicate's gap is the same to the bit either way)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (bearish[crisis].sum(axis=-1) / sketches[crisis].sum(axis=-1)
                - bearish[calm].sum(axis=-1) / sketches[calm].sum(axis=-1))


def drawn_positions(rng, crisis, calm, replicates):
    """Each replicate's drawn crisis and calm positions, (replicates x len) each, in the generator's
    order: the crisis draw, then the calm draw, replicate after replicate. numpy's Generator.choice
    with replacement is integers(0, len); one integers call with a bound per draw takes the same
    numbers from the stream as the 2 x replicates calls (test_hb_draws.py holds this to the bit)."""
    if isinstance(rng, WarehouseDraws):
        return rng.positions(crisis, calm, replicates)
    crisis, calm = np.asarray(crisis, dtype=np.int64), np.asarray(calm, dtype=np.int64)
    bounds = np.concatenate([np.full(len(crisis), len(crisis)), np.full(len(calm), len(calm))])
    index = rng.integers(0, np.tile(bounds, replicates)).reshape(replicates, len(bounds))
    return crisis[index[:, :len(crisis)]], calm[index[:, len(crisis):]]


def paired_ci(rng, counts, a, b, crisis, calm, replicates, min_finite):
    """Percentile CI of gap_a - gap_b over stratified date draws (positions into the count arrays),
    all replicates at once."""
    crisis_draws, calm_draws = drawn_positions(rng, crisis, calm, replicates)
    stats = gap(*counts[a], crisis_draws, calm_draws) - gap(*counts[b], crisis_draws, calm_draws)
    finite = stats[np.isfinite(stats)]
    if len(finite) < min_finite:
        return None, None, len(finite)
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high), len(finite)


class WarehouseDraws:
    """The warehouse's own counter-based draws (ingest/stats/bootstrap.py) behind the one
    Generator method the bootstrap uses, so a run does not depend on numpy's stream."""

    def __init__(self, seed: int, stream: str):

        self.bootstrap, self.seed, self.key, self.calls = bootstrap, seed, bootstrap.cohort_key(stream), 0

    def choice(self, values, size, replace=True):
        index = self.bootstrap.case_index(self.seed, self.key, self.calls, np.arange(size), len(values))
        self.calls += 1
        return np.asarray(values)[index]

    def positions(self, crisis, calm, replicates):
        """What `replicates` pairs of choice(crisis), choice(calm) calls draw, in one array operation each."""
        calls = self.calls + 2 * np.arange(replicates, dtype=np.int64)[:, None]
        drawn = [np.asarray(values, dtype=np.int64)[self.bootstrap.case_index(
                     self.seed, self.key, calls + offset, np.arange(len(values), dtype=np.int64)[None, :], max(len(values), 1))]
                 for offset, values in enumerate((crisis, calm))]
        self.calls += 2 * replicates
        return drawn[0], drawn[1]


def draws_for(params: AuditParams, model_key: str, stream: str):
    """A fresh generator for one model's contrast: release = the published numpy stream seeded
    hb_bootstrap_seed (E3 continues E2's generator; E1 starts a fresh one), warehouse = the
    counter-based draws keyed by model and stream."""
    if params.draws == "release":
        return np.random.default_rng(params.seed)
    return WarehouseDraws(params.warehouse_seed, f"{model_key}:{stream}")


def _hac_delta(sample, lags):
    y, signal, lap = sample.hit, sample.signal, sample.lap
    x = np.column_stack([np.ones_like(y), signal, lap, signal * lap])
    xtx_inv = np.linalg.pinv(x.T @ x)
    beta = xtx_inv @ x.T @ y
    scores = x * (y - x @ beta)[:, None]
    meat = scores.T @ scores
    for lag in range(1, lags + 1):
        weight = 1 - lag / (lags + 1)
        gamma = scores[lag:].T @ scores[:-lag]
        meat += weight * (gamma + gamma.T)
    cov = xtx_inv @ meat @ xtx_inv
    return float(beta[3]), float(beta[3] / math.sqrt(cov[3, 3])), int(np.linalg.matrix_rank(x)) < 4


def window_table(mine: pd.DataFrame, crisis, calm):
    """One model's int_hb_sketch_counts rows as count arrays per arm over crisis + calm (dates may
    repeat), and the positions of each window in them: the bootstrap draws positions
    (Generator.choice draws the same indices whatever the array holds, so the stream is unchanged)."""
    window_dates = list(crisis) + list(calm)
    table = {}
    for arm, part in mine.groupby("arm"):
        indexed = part.set_index("decision_date")
        table[arm] = (indexed["n_bearish"].astype(float).reindex(window_dates, fill_value=0.0).to_numpy(),
                      indexed["n_sketches"].astype(float).reindex(window_dates, fill_value=0.0).to_numpy())
    return table, np.arange(len(crisis)), np.arange(len(crisis), len(window_dates))


def r_signals(mine: pd.DataFrame, pre_dates, realized: dict) -> pd.DataFrame:
    """The R arm's net signal per PRE date (in order) with R sketches, a realized direction and a net
    signal != 0, and whether it hit: the delta regression's sample before its LAP value is joined."""
    r_counts = mine[mine["arm"] == "R"].set_index("decision_date")
    rows = []
    for date in pre_dates:
        if date not in r_counts.index or pd.isna(realized.get(date)):
            continue
        net = r_counts.at[date, "n_bullish"] - r_counts.at[date, "n_bearish"]
        if net == 0:
            continue
        signal = 1 if net > 0 else -1
        rows.append({"decision_date": date, "signal": signal, "hit": float(signal == realized[date])})
    return pd.DataFrame(rows, columns=["decision_date", "signal", "hit"]).set_index("decision_date")


@dataclass(frozen=True)
class DeltaSample:
    """The delta regression's sample as float arrays of one length, in date order (a jackknife fits
    it 200 times per model: arrays, not a frame each time)."""
    signal: np.ndarray
    hit: np.ndarray
    lap: np.ndarray

    def __len__(self) -> int:
        return len(self.lap)


def delta_sample(signals: pd.DataFrame, lap: pd.Series) -> DeltaSample:
    """The delta regression's sample: the dates of `signals` (r_signals) that have a LAP value (`lap`,
    indexed by date), in order."""
    return sample_at(signals, lap.index.get_indexer(signals.index), lap.to_numpy(float), np.ones(len(lap), bool))


def sample_at(signals: pd.DataFrame, position: np.ndarray, lap: np.ndarray, has_lap: np.ndarray) -> DeltaSample:
    """The sample from positions of the signals' dates among LAP's dates (-1: not probed) and LAP by
    position, where `has_lap`."""
    found = position >= 0
    found[found] = has_lap[position[found]]
    return DeltaSample(signals["signal"].to_numpy(float)[found], signals["hit"].to_numpy(float)[found], lap[position[found]])


def delta_fit(sample: DeltaSample, params: AuditParams) -> dict:
    """delta, its HAC t, n, the variance of lap and the gate (n | lowvar | None); the estimate is kept
    only when no gate fires."""
    out = {"delta_n": len(sample)}
    if len(sample):
        lap_var = float(np.var(sample.lap))
        out["delta_lap_variance"] = lap_var
        out["delta_gate"] = ("n" if len(sample) <= params.delta_min_n
                             else "lowvar" if lap_var <= params.delta_min_lap_variance else None)
        estimate, t_value, deficient = _hac_delta(sample, params.lags)
        out["delta_rank_deficient"] = deficient
        if out["delta_gate"] is None:
            out["delta"], out["delta_t"] = estimate, t_value
    return out


def _binomial_upper_tail(hits, n):
    return sum(math.comb(n, k) for k in range(hits, n + 1)) / 2 ** n


def audit_estimates(counts: pd.DataFrame, dates: pd.DataFrame, lap: pd.DataFrame, params: AuditParams) -> pd.DataFrame:
    """One row per model_key of int_hb_sketch_counts (with int_hb_dates and int_hb_lap_by_date)."""
    def draws(model_key, contrast):
        return draws_for(params, model_key, contrast)

    ci = dict(replicates=params.replicates, min_finite=params.min_finite)
    crisis = dates[dates["date_window"] == "crisis"].sort_values("window_position")["decision_date"].to_numpy()
    calm = dates[dates["date_window"] == "calm"].sort_values("window_position")["decision_date"].to_numpy()
    pre = dates[dates["period"] == "pre"].sort_values("decision_date")
    realized = dict(zip(dates["decision_date"], dates["realized_direction"]))

    rows = []
    for model_key, mine in counts.groupby("model_key", sort=True):
        table, crisis_positions, calm_positions = window_table(mine, crisis, calm)
        row = {"model_key": model_key}
        rng = draws(model_key, "e2")
        if {"D", "M"} <= table.keys():
            row["e2_lo"], row["e2_hi"], row["e2_finite_replicates"] = paired_ci(rng, table, "D", "M", crisis_positions, calm_positions, **ci)
        if {"W", "W_fake"} <= table.keys():
            row["e3_lo"], row["e3_hi"], row["e3_finite_replicates"] = paired_ci(rng, table, "W_fake", "W", crisis_positions, calm_positions, **ci)
        if {"R_batch", "D_batch"} <= table.keys():
            row["e1_lo"], row["e1_hi"], row["e1_finite_replicates"] = paired_ci(
                draws(model_key, "e1"), table, "R_batch", "D_batch", crisis_positions, calm_positions, **ci)

        laps = lap[lap["model_key"] == model_key].set_index("decision_date")
        row.update(delta_fit(delta_sample(r_signals(mine, pre["decision_date"], realized), laps["lap"]), params))

        # LAP recall hit rate over PRE dates with UD != 0 and a realized direction, and its chance test
        pre_laps = laps.reindex(pre["decision_date"]).dropna(subset=["ud"])
        hits = n = 0
        for date, entry in pre_laps.iterrows():
            if entry["ud"] != 0 and not pd.isna(realized.get(date)):
                n += 1
                hits += int(np.sign(entry["ud"]) == realized[date])
        row["recall_hits"], row["recall_n"] = hits, n
        row["recall_p_value"] = _binomial_upper_tail(hits, n) if n else None
        row["lap_at_chance"] = None if not n else bool(row["recall_p_value"] >= params.chance_alpha)
        rows.append(row)

    columns = ["model_key", "e1_lo", "e1_hi", "e1_finite_replicates", "e2_lo", "e2_hi", "e2_finite_replicates",
               "e3_lo", "e3_hi", "e3_finite_replicates", "delta", "delta_t", "delta_n", "delta_lap_variance",
               "delta_gate", "delta_rank_deficient", "recall_hits", "recall_n", "recall_p_value", "lap_at_chance"]
    out = pd.DataFrame(rows, columns=columns)
    # typed even with no rows (an empty release), so the marts' contracts hold on every warehouse
    for name in ("model_key", "delta_gate"):
        out[name] = out[name].astype("string")
    for name in ("delta_rank_deficient", "lap_at_chance"):
        out[name] = out[name].astype("boolean")
    for name in ("e1_finite_replicates", "e2_finite_replicates", "e3_finite_replicates", "delta_n", "recall_hits", "recall_n"):
        out[name] = out[name].astype("Int64")
    for name in ("e1_lo", "e1_hi", "e2_lo", "e2_hi", "e3_lo", "e3_hi", "delta", "delta_t", "delta_lap_variance", "recall_p_value"):
        out[name] = out[name].astype("float64")
    return out
