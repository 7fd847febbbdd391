"""The error-enriched case sample of the human validation (paper §3.8, Appendix G).

Each case's error-proneness score (eq. G.1) comes from one model's standard-prompt answers:

    EPS = 0.4 (1 - Acc)~ + 0.2 HTR~      (condition 0)
        + 0.2 AIR~ + 0.2 HBR~            (condition 2.1)

each the mean over the case's questions (a question's value is the mean over its samples), `~`
min-max normalised within cohort over the cases where it is defined; a component a case lacks, or
one that is constant across the cohort, contributes 0. Cases are drawn per cohort without
replacement with weights w ∝ exp(EPS / tau), by successive sampling (numpy's
`choice(replace=False, p=w)`), round(fraction x cases) of them (at least 2), then split into two
halves (sizes differing by at most one), each assessed by two annotators. One numpy Generator seeded
with `seed` draws every cohort in name order: the sample, then the order that splits it.

Weighted sampling without replacement does not include cases with probabilities proportional to
their weights, so each case's inclusion probability is estimated by simulating the same draw
(Gumbel-top-k, which is successive sampling) `simulations` times, with its Monte Carlo standard
error stored beside it.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from ingest.db import insert_rows, require_marts
from ingest.errors import InputError

WEIGHTS = {"inaccuracy": 0.4, "htr": 0.2, "air": 0.2, "hbr": 0.2}


@dataclass(frozen=True)
class DesignParams:
    model: str
    fraction: float = 0.10
    tau: float = 0.3
    seed: int = 2026
    annotators: tuple[str, ...] = ("annotator-1", "annotator-2", "annotator-3", "annotator-4")
    simulations: int = 100_000

    def check(self) -> None:
        if not 0 < self.fraction <= 1:
            raise InputError("--fraction", f"{self.fraction} is not a share of cases", "give a fraction in (0, 1], e.g. 0.10")
        if self.tau <= 0:
            raise InputError("--tau", f"tau {self.tau} is not positive", "give a temperature above 0, e.g. 0.3")
        if len(self.annotators) != 4 or len(set(self.annotators)) != 4:
            raise InputError("--annotators", f"{','.join(self.annotators)!r}",
                             "name four different annotators: the first two assess half 1, the last two half 2")


def case_components(con, model: str) -> dict[tuple[str, str], dict[str, float | None]]:
    """{(cohort, case_id): the four EPS components before normalisation} for every case with questions."""
    rows = con.execute("""
        with questions as (
            select distinct cohort, case_id from dim_questions
        ),
        answer_questions as (
            select cohort, case_id, question_id, avg(acc) as acc, avg(htr) as htr
            from fct_answers
            where model = ? and condition = '0' and prompt_variant = 'standard' and is_latest_in_cell
            group by all
        ),
        pair_questions as (
            select cohort, case_id, question_id, avg(air) as air, avg(hbr) as hbr
            from fct_answer_pairs
            where model = ? and condition = '2.1' and prompt_variant = 'standard'
            group by all
        ),
        answers as (
            select cohort, case_id, 1 - avg(acc) as inaccuracy, avg(htr) as htr from answer_questions group by all
        ),
        pairs as (
            select cohort, case_id, avg(air) as air, avg(hbr) as hbr from pair_questions group by all
        )
        select questions.cohort, questions.case_id, answers.inaccuracy, answers.htr, pairs.air, pairs.hbr
        from questions
        left join answers using (cohort, case_id)
        left join pairs using (cohort, case_id)
        order by questions.cohort, questions.case_id""", [model, model]).fetchall()
    return {(cohort, case): dict(zip(WEIGHTS, values)) for cohort, case, *values in rows}


def eps_scores(components: dict[tuple[str, str], dict[str, float | None]]) -> dict[tuple[str, str], float]:
    """Eq. G.1 with min-max normalisation within cohort (undefined or constant components give 0)."""
    scores = {key: 0.0 for key in components}
    for cohort in sorted({cohort for cohort, _ in components}):
        keys = [key for key in components if key[0] == cohort]
        for name, weight in WEIGHTS.items():
            values = [components[key][name] for key in keys if components[key][name] is not None]
            low, high = (min(values), max(values)) if values else (0.0, 0.0)
            for key in keys:
                value = components[key][name]
                if value is not None and high > low:
                    scores[key] += weight * (value - low) / (high - low)
    return scores


def sample_size(fraction: float, n_cases: int) -> int:
    """fraction x cases rounded to the nearest whole case (halves up), at least 2, at most all."""
    return min(n_cases, max(2, math.floor(fraction * n_cases + 0.5)))


def draw(scores: dict[tuple[str, str], float], params: DesignParams) -> dict[tuple[str, str], dict]:
    """Weights, the sample (draw order) and its halves, per cohort, from one Generator."""
    rng = np.random.default_rng(params.seed)
    design = {}
    for cohort in sorted({cohort for cohort, _ in scores}):
        keys = sorted(key for key in scores if key[0] == cohort)
        raw = np.exp(np.array([scores[key] for key in keys]) / params.tau)
        weights = raw / raw.sum()
        n = sample_size(params.fraction, len(keys))
        drawn = rng.choice(len(keys), size=n, replace=False, p=weights)
        order = rng.permutation(n)                 # which drawn cases go into half 1 (the first ceil(n/2))
        half = {int(drawn[i]): (1 if rank < math.ceil(n / 2) else 2) for rank, i in enumerate(order)}
        for index, key in enumerate(keys):
            position = np.flatnonzero(drawn == index)
            design[key] = {"eps": scores[key], "weight": float(weights[index]),
                           "sampled": index in half, "half": half.get(index),
                           "draw_order": int(position[0]) + 1 if position.size else None}
    return design


def inclusion_probabilities(weights: np.ndarray, n: int, simulations: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(probabilities, Monte Carlo standard errors) of each unit being among n drawn by successive
    sampling with these weights: the top n of log(w) + Gumbel noise is such a draw."""
    rng = np.random.default_rng([seed, len(weights), n])
    counts = np.zeros(len(weights))
    for start in range(0, simulations, 10_000):
        size = min(10_000, simulations - start)
        keys = np.log(weights) + rng.gumbel(size=(size, len(weights)))
        top = np.argpartition(-keys, n - 1, axis=1)[:, :n]
        counts += np.bincount(top.ravel(), minlength=len(weights))
    probability = counts / simulations
    return probability, np.sqrt(probability * (1 - probability) / simulations)


def create_design(con, params: DesignParams) -> tuple[str, list[dict]]:
    """Draw and store a design (raw.validation_designs, raw.validation_cases, raw.validation_assignments);
    the same parameters on the same answers give the same design id and add nothing."""
    params.check()
    require_marts(con, "dim_questions", "fct_answers", "fct_answer_pairs")
    components = case_components(con, params.model)
    if not any(value is not None for parts in components.values() for value in parts.values()):
        raise InputError("--model", f"no standard-prompt answers of {params.model!r} in conditions 0 or 2.1",
                         "answer (or load) them and run `hindsight build`; EPS is computed from that model's answers")
    scores = eps_scores(components)
    design = draw(scores, params)
    fingerprint = json.dumps({"params": params.__dict__, "eps": sorted((f"{k[0]}/{k[1]}", round(v, 12)) for k, v in scores.items())},
                             sort_keys=True, default=list)
    design_id = "vd_" + hashlib.sha256(fingerprint.encode()).hexdigest()[:16]
    if con.execute("select count(*) from raw.validation_designs where design_id = ?", [design_id]).fetchone()[0]:
        return design_id, _rows(con, design_id)
    rows = []
    for cohort in sorted({cohort for cohort, _ in design}):
        keys = sorted(key for key in design if key[0] == cohort)
        weights = np.array([design[key]["weight"] for key in keys])
        n = sum(design[key]["sampled"] for key in keys)
        probability, error = inclusion_probabilities(weights, n, params.simulations, params.seed)
        for key, p, se in zip(keys, probability, error):
            rows.append({"design_id": design_id, "cohort": cohort, "case_id": key[1], **components[key],
                         **design[key], "inclusion_probability": float(p), "inclusion_probability_se": float(se)})
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    con.execute("begin transaction")
    con.execute("insert into raw.validation_designs values (?, ?, ?, ?, ?, ?, ?, ?)",
                [design_id, params.model, params.fraction, params.tau, params.seed, json.dumps(list(params.annotators)),
                 params.simulations, now])
    insert_rows(con, "raw.validation_cases", [
        [r["design_id"], r["cohort"], r["case_id"], r["inaccuracy"], r["htr"], r["air"], r["hbr"], r["eps"], r["weight"],
         r["inclusion_probability"], r["inclusion_probability_se"], r["sampled"], r["half"], r["draw_order"]] for r in rows])
    pairs = {1: params.annotators[:2], 2: params.annotators[2:]}
    insert_rows(con, "raw.validation_assignments", [
        [design_id, annotator, r["cohort"], r["case_id"]] for r in rows if r["sampled"] for annotator in pairs[r["half"]]])
    con.execute("commit")
    return design_id, rows


def _rows(con, design_id: str) -> list[dict]:
    cursor = con.execute("select * from raw.validation_cases where design_id = ? order by cohort, case_id", [design_id])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]
