"""Table G.1's intervals as matrix products equal the statistics recomputed replicate by replicate
from their definitions, over the assessments each replicate repeats, for both draw streams."""
import numpy as np
import pandas as pd
import pytest

from ingest.stats import bootstrap
from ingest.stats.validation_agreement import agreement_table

REPLICATES, SEED = 300, 2026


def synthetic(seed: int = 1):
    """Two cohorts of sampled cases, two raters per question (some missing), `na`s, one cohort whose
    trap item is all `yes` (kappa undefined), and a judge's scores."""
    rng = np.random.default_rng(seed)
    cases = pd.DataFrame([{"design_id": "d1", "cohort": cohort, "case_id": f"k{i}",
                           "inclusion_probability": rng.uniform(0.2, 1)} for cohort in ("a", "b") for i in range(9)])
    annotations, judged = [], []
    for case in cases.itertuples():
        for q in range(3):
            keys = {"design_id": "d1", "cohort": case.cohort, "case_id": case.case_id, "question_id": f"{case.case_id}-{q}"}
            for rater in (1, 2):
                if rng.random() < 0.9:
                    annotations.append({**keys, "rater": rater, "reasonable": rng.choice(["yes", "no", "na"], p=[.7, .2, .1]),
                                        "agree_reference": rng.choice(["yes", "no"]),
                                        "agree_trap": "yes" if case.cohort == "a" else rng.choice(["yes", "no"])})
            judged.append({**keys, "judge_model": "j", "human_accuracy_score": rng.choice([0, .5, 1]),
                           "judge_accuracy_score": rng.choice([0, .5, 1]), "human_htr_score": rng.choice([0.0, 1.0, np.nan]),
                           "judge_htr_score": 1.0})
    return cases, pd.DataFrame(annotations), pd.DataFrame(judged)


def kappa(first, second) -> float:
    observed = np.mean(first == second)
    expected = sum(np.mean(first == c) * np.mean(second == c) for c in np.union1d(first, second))
    return np.nan if expected >= 1 else (observed - expected) / (1 - expected)


def by_definition(rows: pd.DataFrame, pairs: pd.DataFrame, counts: dict) -> dict:
    """The four statistics over the assessments (and rater pairs) of each drawn case, repeated as often
    as it was drawn."""
    m = rows["key"].map(counts).fillna(0).astype(int).to_numpy()
    r = pairs["key"].map(counts).fillna(0).astype(int).to_numpy()
    hit, weight = np.repeat(rows["hit"].to_numpy(), m), np.repeat(rows["weight"].to_numpy(), m)
    first, second = np.repeat(pairs["first"].to_numpy(), r), np.repeat(pairs["second"].to_numpy(), r)
    return {"sample_agreement": hit.mean() if len(hit) else np.nan,
            "ipw_agreement": (hit * weight).sum() / weight.sum() if len(hit) else np.nan,
            "inter_annotator_agreement": np.mean(first == second) if len(first) else np.nan,
            "cohens_kappa": kappa(first, second) if len(first) else np.nan}


def replicate_counts(draws: str, keys: list, strata: dict[str, list[str]]):
    """Each replicate's draws as the module documents them."""
    if draws == "warehouse":
        w = {name: bootstrap.weights(SEED, "|".join([*keys[:3], keys[3] or "", name]), len(members), REPLICATES)
             for name, members in strata.items()}
        for b in range(REPLICATES):
            yield {case: w[name][b, i] for name, members in strata.items() for i, case in enumerate(members)}
        return
    rng = np.random.default_rng([SEED, *[sum(map(ord, str(k))) for k in keys]])
    for _ in range(REPLICATES):
        counts = {}
        for members in strata.values():
            for i in rng.integers(0, len(members), len(members)):
                counts[members[i]] = counts.get(members[i], 0) + 1
        yield counts


@pytest.mark.parametrize("draws", ["numpy", "warehouse"])
def test_the_intervals_equal_the_statistics_recomputed_per_replicate(draws):
    cases, annotations, judged = synthetic()
    table = agreement_table(cases, annotations, judged, REPLICATES, SEED, draws)
    weight = {f"{c.cohort}/{c.case_id}": 1 / c.inclusion_probability for c in cases.itertuples()}
    checked = 0
    for (cohort, item), rows in table[table["judge_model"].isna()].groupby(["cohort", "item"]):
        column = {"reasonable": "reasonable", "reference": "agree_reference", "trap": "agree_trap"}[item]
        chosen = annotations[annotations[column].isin(["yes", "no"]) & ((annotations["cohort"] == cohort) | (cohort == "all"))]
        chosen = chosen.assign(key=chosen["cohort"] + "/" + chosen["case_id"], hit=(chosen[column] == "yes").astype(float))
        chosen = chosen.assign(weight=chosen["key"].map(weight))
        wide = chosen.pivot_table(index=["key", "question_id"], columns="rater", values=column, aggfunc="first").dropna()
        pairs = pd.DataFrame({"key": wide.index.get_level_values("key"), "first": wide[1].to_numpy(), "second": wide[2].to_numpy()})
        members = sorted(chosen["key"].unique())
        strata = {}
        for key in members:
            strata.setdefault(key.split("/")[0], []).append(key)
        replicates = [by_definition(chosen, pairs, counts)
                      for counts in replicate_counts(draws, ["d1", cohort, item, None], strata)]
        point = by_definition(chosen, pairs, dict.fromkeys(members, 1))
        for row in rows.itertuples():
            values = np.array([r[row.statistic] for r in replicates])
            finite = values[np.isfinite(values)]
            assert row.n_finite_replicates == len(finite), (cohort, item, row.statistic)
            if not np.isfinite(point[row.statistic]):
                assert pd.isna(row.estimate)
            else:
                assert row.estimate == pytest.approx(point[row.statistic], abs=1e-12)
            if len(finite) >= REPLICATES / 2:
                low, high = np.percentile(finite, [2.5, 97.5])
                assert (row.ci_low, row.ci_high) == pytest.approx((low, high), abs=1e-12), (cohort, item, row.statistic)
                checked += 1
            else:
                assert pd.isna(row.ci_low) and pd.isna(row.ci_high)
    # kappa of the all-`yes` cohort is undefined in every replicate; everything else has an interval
    assert table.query("cohort == 'a' and item == 'trap' and statistic == 'cohens_kappa'")["n_finite_replicates"].item() == 0
    assert checked >= 25
