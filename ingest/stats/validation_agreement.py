"""Table G.1 of the human validation (paper Appendix G), with case-clustered bootstrap intervals.

Per design, cohort (each, and `all`) and item:

- sample_agreement: the share of `yes` among individual assessments (`na` excluded);
- ipw_agreement: the Hajek design-weighted share, each assessment weighted by 1 / its case's
  inclusion probability;
- inter_annotator_agreement: among the questions both annotators of a half judged yes or no, the
  share they judged alike;
- cohens_kappa: Cohen's kappa over the same questions (the half's first and second annotator as the
  two raters).

Judge items (`judge_accuracy`, `judge_htr`, per judge model) compare an annotator's own score of a
free-response answer with the LLM judge's: agreement is the share of equal scores, kappa is over the
scores 0, 0.5 and 1, and the design weights apply as above.

Intervals resample the sampled cases with replacement within each cohort (`all` resamples every
cohort at once), percentile 2.5-97.5; a replicate whose statistic is undefined (no pair, one
category) is left out, and an interval needs half of them. Every statistic is a ratio of per-case
sums, so a row's replicates are one product of its (replicates x cases) multiplicities with those
sums, not a pass over the assessments per replicate. The draws (`draws`):

- `numpy` (DuckDB's default): B replicates from one seeded numpy Generator per row of the table;
- `warehouse`: the counter-based draws of ingest/stats/bootstrap.py (the metric bootstrap's), one
  stream per row and cohort (stream_key), which any engine draws alike: the Spark target runs this
  module on an executor with them (ingest/spark/functions.py) and gives the same intervals.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ingest.stats import bootstrap

ITEMS = {"reasonable": "reasonable", "reference": "agree_reference", "trap": "agree_trap"}
JUDGE_ITEMS = {"judge_accuracy": "accuracy", "judge_htr": "htr"}
STATISTICS = ("sample_agreement", "ipw_agreement", "inter_annotator_agreement", "cohens_kappa")
DRAWS = ("numpy", "warehouse")
COLUMNS = ["design_id", "cohort", "item", "judge_model", "statistic", "estimate", "ci_low", "ci_high", "n_questions",
           "n_cases", "n_assessments", "n_finite_replicates", "bootstrap_replicates"]


def _tables(cases: pd.DataFrame, annotations: pd.DataFrame, judged: pd.DataFrame):
    """(item, judge_model, individual assessments, rater pairs): individual rows carry design, cohort,
    case_key, question_id, hit (0/1) and weight (1 / inclusion probability); pairs carry first and
    second rating of one thing."""
    probability = {(r.design_id, r.cohort, r.case_id): r.inclusion_probability for r in cases.itertuples()}

    def base(rows: pd.DataFrame) -> pd.DataFrame:
        keys = list(rows[["design_id", "cohort", "case_id"]].itertuples(index=False, name=None))
        return pd.DataFrame({"design_id": rows["design_id"].to_numpy(), "cohort": rows["cohort"].to_numpy(),
                             "case_key": (rows["cohort"] + "/" + rows["case_id"]).to_numpy(),
                             "question_id": rows["question_id"].to_numpy(),
                             "weight": [1.0 / probability[key] for key in keys]})

    for item, column in ITEMS.items():
        rows = annotations[annotations[column].isin(["yes", "no"])].reset_index(drop=True)
        individual = base(rows).assign(hit=(rows[column] == "yes").astype(float).to_numpy(),
                                       rater=rows["rater"].astype(int).to_numpy(), value=rows[column].to_numpy())
        if individual.empty:
            continue
        wide = individual.pivot_table(index=["design_id", "cohort", "case_key", "question_id"], columns="rater",
                                      values="value", aggfunc="first")
        pairs = (wide.dropna(subset=[1, 2]).rename(columns={1: "first", 2: "second"})[["first", "second"]].reset_index()
                 if {1, 2} <= set(wide.columns) else pd.DataFrame(columns=["design_id", "cohort", "case_key", "first", "second"]))
        yield item, None, individual, pairs
    for item, column in JUDGE_ITEMS.items():
        for judge_model, rows in judged.groupby("judge_model", sort=True):
            rows = rows[rows[f"human_{column}_score"].notna() & rows[f"judge_{column}_score"].notna()].reset_index(drop=True)
            human, judge = rows[f"human_{column}_score"].astype(float).to_numpy(), rows[f"judge_{column}_score"].astype(float).to_numpy()
            individual = base(rows).assign(hit=(human == judge).astype(float))
            pairs = individual[["design_id", "cohort", "case_key"]].assign(first=human, second=judge)
            yield item, judge_model, individual, pairs


def stream_key(keys: list, stratum: str) -> str:
    """The `warehouse` draws' stream of one cohort (stratum) of one row of the table (design, cohort or
    `all`, item, judge model)."""
    design_id, cohort, item, judge_model = keys
    return "|".join([design_id, cohort, item, judge_model or "", stratum])


def agreement_table(cases: pd.DataFrame, annotations: pd.DataFrame, judged: pd.DataFrame,
                    replicates: int = 2000, seed: int = 2026, draws: str = "numpy") -> pd.DataFrame:
    """Table G.1 rows (COLUMNS) for every design, cohort and `all`, item (and judge model) and statistic:
    `cases` as stg_raw__validation_cases, `annotations` (with `rater`) as stg_raw__annotations,
    `judged` as stg_raw__judge_checks."""
    if draws not in DRAWS:
        raise ValueError(f"unknown validation_bootstrap_draws {draws!r}: use one of {', '.join(DRAWS)}")
    rows = []
    for item, judge_model, individual, pairs in _tables(cases, annotations, judged):
        for design_id in sorted(individual["design_id"].unique()):
            mine = individual[individual["design_id"] == design_id]
            for cohort in sorted(mine["cohort"].unique()) + ["all"]:
                rows += _rows_for(_pick(individual, design_id, cohort), _pick(pairs, design_id, cohort),
                                  [design_id, cohort, item, judge_model], replicates, seed, draws)
    table = pd.DataFrame(rows, columns=COLUMNS)
    numbers = ["estimate", "ci_low", "ci_high"]
    return table.astype({**{c: "float64" for c in numbers}, **{c: "int64" for c in COLUMNS[8:]},
                         **{c: "object" for c in COLUMNS[:5]}})


def _pick(frame: pd.DataFrame, design_id: str, cohort: str) -> pd.DataFrame:
    chosen = frame["design_id"] == design_id
    return frame[chosen if cohort == "all" else chosen & (frame["cohort"] == cohort)]


def _multiplicities(strata: dict[str, list[str]], keys: list, replicates: int, seed: int, draws: str) -> np.ndarray:
    """(replicates x cases) how often each case was drawn, the cases in strata order (sorted)."""
    sizes = [len(members) for members in strata.values()]
    if draws == "warehouse":
        return np.hstack([np.zeros((replicates, 0))] + [bootstrap.weights(seed, stream_key(keys, name), len(members), replicates)
                                                         for name, members in strata.items()])
    # one stream per row of the table, stable across runs (not Python's salted hash); the draws in
    # the order they always had: per replicate, each stratum's n draws
    rng = np.random.default_rng([seed, *[sum(map(ord, str(k))) for k in keys]])
    out = np.zeros((replicates, sum(sizes)))
    offsets = np.cumsum([0, *sizes[:-1]])
    for b in range(replicates):
        for offset, size in zip(offsets, sizes):
            out[b, offset:offset + size] = np.bincount(rng.integers(0, size, size), minlength=size)
    return out


class _CaseSums:
    """Per case, the sums every statistic is a ratio of, so a statistic's replicates are matrix
    products of the (replicates x cases) multiplicities with these columns."""

    def __init__(self, individual: pd.DataFrame, pairs: pd.DataFrame, cases: list[str]):
        position = {case: i for i, case in enumerate(cases)}
        at = individual["case_key"].map(position).to_numpy()
        hit, weight = individual["hit"].to_numpy(float), individual["weight"].to_numpy(float)

        def per_case(index, values=None):
            return np.bincount(index, weights=values, minlength=len(cases)).astype(float)

        self.assessments, self.hits = per_case(at), per_case(at, hit)
        self.weights, self.weighted_hits = per_case(at, weight), per_case(at, hit * weight)
        pairs = pairs[pairs["case_key"].isin(position)]      # a pair of an unsampled case never counts
        at = pairs["case_key"].map(position).to_numpy().astype(int)
        first, second = pairs["first"].to_numpy(), pairs["second"].to_numpy()
        self.pairs, self.alike = per_case(at), per_case(at, (first == second).astype(float))
        categories = np.union1d(first, second) if len(pairs) else []
        self.first = np.column_stack([per_case(at, (first == c).astype(float)) for c in categories] or [np.zeros(len(cases))])
        self.second = np.column_stack([per_case(at, (second == c).astype(float)) for c in categories] or [np.zeros(len(cases))])

    def statistics(self, m: np.ndarray) -> dict[str, np.ndarray]:
        """The four statistics for every row of multiplicities M (NaN where undefined)."""
        n, pairs = m @ self.assessments, m @ self.pairs
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = np.where(pairs > 0, (m @ self.alike) / pairs, np.nan)
            # p_e from each rater's own category shares: exactly 1 when both use one category alone
            expected = ((m @ self.first) * (m @ self.second)).sum(axis=1) / (pairs * pairs)
            return {"sample_agreement": np.where(n > 0, (m @ self.hits) / n, np.nan),
                    "ipw_agreement": np.where(n > 0, (m @ self.weighted_hits) / (m @ self.weights), np.nan),
                    "inter_annotator_agreement": observed,
                    "cohens_kappa": np.where((pairs > 0) & (expected < 1), (observed - expected) / (1 - expected), np.nan)}


def _rows_for(individual: pd.DataFrame, pairs: pd.DataFrame, keys: list, replicates: int, seed: int,
              draws: str = "numpy") -> list[list]:
    cases = sorted(individual["case_key"].unique())
    strata: dict[str, list[str]] = {}
    for key in cases:
        strata.setdefault(key.split("/", 1)[0], []).append(key)
    sums = _CaseSums(individual, pairs, cases)
    estimate = sums.statistics(np.ones((1, len(cases))))
    values = sums.statistics(_multiplicities(strata, keys, replicates, seed, draws))
    out = []
    for name in STATISTICS:
        finite = values[name][np.isfinite(values[name])]
        low, high = np.percentile(finite, [2.5, 97.5]) if replicates and len(finite) >= replicates / 2 else (None, None)
        value = float(estimate[name][0])
        out.append([*keys[:4], name, None if not np.isfinite(value) else value,
                    None if low is None else float(low), None if high is None else float(high),
                    int(individual["question_id"].nunique()), len(cases), len(individual), len(finite), replicates])
    return out
