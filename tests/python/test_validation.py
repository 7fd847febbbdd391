"""Human validation (paper §3.8, Appendix G): the error-enriched design, packets, loading, and Table
G.1, each recomputed here from its definition, on answers with a planted hindsight rate and
annotators with planted agreement rates."""
from __future__ import annotations

import csv
import itertools
import math
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import assert_dbt_passed, hindsight, new_warehouse
from ingest.demo.run import load_demo
from ingest.llm.simulators.annotators import fill_packet

pytestmark = pytest.mark.slow

MODEL = "sim:hindsight@0.3"
ANNOTATORS = ["ann-a", "ann-b", "ann-c", "ann-d"]
RATES = {"reasonable": 0.9, "agree_reference": 0.8, "agree_trap": 0.7, "judge": 0.75}


@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    db = new_warehouse(tmp_path_factory.mktemp("validation"))
    load_demo(db)
    hindsight(db, "build", "--exclude", "resource_type:test", "resource_type:unit_test")
    hindsight(db, "answer", "--model", MODEL, "--conditions", "0,2.1", "--variant", "standard")
    hindsight(db, "build", "--exclude", "resource_type:test", "resource_type:unit_test")
    hindsight(db, "judge", "--model", "sim:exact-match")
    hindsight(db, "build", "--exclude", "resource_type:test", "resource_type:unit_test")
    return db


@pytest.fixture
def db(answered, tmp_path):
    copy = tmp_path / "w.duckdb"
    shutil.copy(answered, copy)
    return copy


def frame(db, sql: str) -> pd.DataFrame:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).df()


def independent_eps(db) -> dict[tuple[str, str], float]:
    answers = frame(db, f"""select cohort, case_id, question_id, acc, htr from fct_answers
                           where model = '{MODEL}' and condition = '0' and prompt_variant = 'standard' and is_latest_in_cell""")
    pairs = frame(db, f"""select cohort, case_id, question_id, air, hbr from fct_answer_pairs
                         where model = '{MODEL}' and condition = '2.1' and prompt_variant = 'standard'""")
    cases = frame(db, "select distinct cohort, case_id from dim_questions")
    per_case = cases.set_index(["cohort", "case_id"])
    a = answers.groupby(["cohort", "case_id", "question_id"])[["acc", "htr"]].mean().groupby(["cohort", "case_id"]).mean()
    p = pairs.groupby(["cohort", "case_id", "question_id"])[["air", "hbr"]].mean().groupby(["cohort", "case_id"]).mean()
    per_case = per_case.join(1 - a[["acc"]].rename(columns={"acc": "inacc"})).join(a[["htr"]]).join(p)
    eps = pd.Series(0.0, index=per_case.index)
    for column, weight in (("inacc", 0.4), ("htr", 0.2), ("air", 0.2), ("hbr", 0.2)):
        values = per_case[column]
        for cohort in per_case.index.get_level_values(0).unique():
            v = values.loc[cohort]
            low, high = v.min(), v.max()
            if pd.notna(low) and high > low:
                eps.loc[cohort] = (eps.loc[cohort] + weight * ((v - low) / (high - low)).fillna(0)).to_numpy()
    return eps.to_dict()


def exact_inclusion(weights: np.ndarray, n: int) -> np.ndarray:
    """Successive sampling's inclusion probabilities by summing over every ordered draw."""
    p = weights / weights.sum()
    out = np.zeros(len(p))
    for order in itertools.permutations(range(len(p)), n):
        prob, left = 1.0, 1.0
        for i in order:
            prob *= p[i] / left
            left -= p[i]
        out[list(order)] += prob
    return out


def test_the_design_is_eq_g1_and_its_draw_and_inclusion_probabilities(db):
    done = hindsight(db, "validation", "sample", "--model", MODEL, "--fraction", "0.3", "--seed", "11",
                     "--annotators", ",".join(ANNOTATORS))
    assert "drawn" in done.output
    again = hindsight(db, "validation", "sample", "--model", MODEL, "--fraction", "0.3", "--seed", "11",
                      "--annotators", ",".join(ANNOTATORS))
    assert "already stored" in again.output                                   # the same design is not drawn twice
    hindsight(db, "build", "--select", "+fct_validation_cases")
    stored = frame(db, "select * from fct_validation_cases order by cohort, case_id")
    eps = independent_eps(db)
    assert len(stored) == len(eps)
    for row in stored.itertuples():
        assert row.eps == pytest.approx(eps[(row.cohort, row.case_id)], abs=1e-12)
    rng = np.random.default_rng(11)
    for _, cases in stored.groupby("cohort", sort=True):
        cases = cases.sort_values("case_id")
        weights = np.exp(cases["eps"].to_numpy() / 0.3)
        weights = weights / weights.sum()
        assert cases["weight"].to_numpy() == pytest.approx(weights)
        n = min(len(cases), max(2, math.floor(0.3 * len(cases) + 0.5)))
        drawn = rng.choice(len(cases), size=n, replace=False, p=weights)
        order = rng.permutation(n)
        halves = {int(drawn[i]): 1 if rank < math.ceil(n / 2) else 2 for rank, i in enumerate(order)}
        assert {i for i, s in enumerate(cases["sampled"]) if s} == set(halves)
        assert {i: int(h) for i, h in enumerate(cases["half"]) if pd.notna(h)} == halves
        exact = exact_inclusion(cases["weight"].to_numpy(), n)
        # simulated: within five Monte Carlo standard errors of the exact probabilities
        assert np.all(np.abs(cases["inclusion_probability"].to_numpy() - exact)
                      <= 5 * cases["inclusion_probability_se"].to_numpy() + 1e-9)
        assert exact.sum() == pytest.approx(n)
        # a case with a larger weight is never less likely to be drawn, but not proportionally so
        assert not np.allclose(exact, n * cases["weight"].to_numpy())


def test_packets_loading_and_table_g1_recomputed(db, tmp_path):
    hindsight(db, "validation", "sample", "--model", MODEL, "--fraction", "1", "--seed", "3",
              "--annotators", ",".join(ANNOTATORS))
    out = tmp_path / "packets"
    hindsight(db, "validation", "export", "--out", str(out), "--judge-sample", "2")
    design = frame(db, "select * from raw.validation_cases")
    questions = frame(db, "select question_id, case_id, question, correct_answer, hindsight_trap from dim_questions")
    traps = dict(zip(questions["question_id"], questions["hindsight_trap"].notna()))
    half_of = {row.case_id: row.half for row in design.itertuples()}
    for position, annotator in enumerate(ANNOTATORS):
        rows = list(csv.DictReader((out / f"{annotator}.csv").open()))
        assert rows and {half_of[r["case_id"]] for r in rows} == {1 if position < 2 else 2}
        assert all(r["reasonable"] == r["agree_reference"] == r["agree_trap"] == "" for r in rows)
        page = (out / f"{annotator}.html").read_text()
        first = questions[questions["question_id"] == rows[0]["question_id"]].iloc[0]
        assert first["question"].replace("'", "&#x27;") in page and "Reference answer" in page
        fill_packet(out / f"{annotator}.csv", traps, seed=5, rates=RATES)
        fill_packet(out / f"{annotator}_judge_checks.csv", traps, seed=5, rates=RATES)
    for annotator in ANNOTATORS:
        loaded = hindsight(db, "validation", "load", str(out / f"{annotator}.csv")).output
        assert "0 rejected" in loaded
        hindsight(db, "validation", "load", str(out / f"{annotator}_judge_checks.csv"))
    again = hindsight(db, "validation", "load", str(out / "ann-a.csv")).output                   # idempotent
    assert "already loaded by load" in again and "nothing added" in again
    # a packet of another annotator's export never carries anyone's answers
    hindsight(db, "validation", "export", "--out", str(tmp_path / "again"))
    assert all(r["reasonable"] == "" for r in csv.DictReader((tmp_path / "again" / "ann-b.csv").open()))

    bad = tmp_path / "bad.csv"
    good_row = next(csv.DictReader((out / "ann-a.csv").open()))
    other_half = next(r for r in csv.DictReader((out / "ann-c.csv").open()))
    bad.write_text("annotator,case_id,question_id,reasonable,agree_reference,agree_trap,comment\n"
                   f"nobody,{good_row['case_id']},{good_row['question_id']},yes,yes,yes,\n"
                   f"ann-a,{good_row['case_id']},{good_row['question_id']},maybe,yes,yes,\n"
                   f"ann-a,{other_half['case_id']},{other_half['question_id']},yes,yes,yes,\n"
                   f"ann-a,{good_row['case_id']},{good_row['question_id']},no,no,na,changed my mind\n")
    done = hindsight(db, "validation", "load", str(bad), expect=1)
    assert f"{bad}:2: annotator: 'nobody' is not an annotator" in done.stderr
    assert f"{bad}:3: reasonable: 'maybe' is not an answer" in done.stderr and "use yes, no or na" in done.stderr
    assert f"{bad}:4: case_id:" in done.stderr and "1 annotations added" in done.output   # the changed row: a new version

    hindsight(db, "build")
    assert_dbt_passed(db)
    table = frame(db, "select * from agg_validation")
    notes = frame(db, "select * from fct_validation_annotations")
    assert len(notes) == sum(1 for a in ANNOTATORS for _ in csv.DictReader((out / f"{a}.csv").open()))
    changed = notes[(notes["annotator"] == "ann-a") & (notes["question_id"] == good_row["question_id"])].iloc[0]
    assert changed["reasonable"] == "no" and changed["comment"] == "changed my mind"

    weights = dict(zip(design["cohort"] + "/" + design["case_id"], 1 / design["inclusion_probability"]))
    notes["key"] = notes["cohort"] + "/" + notes["case_id"]
    for item, column in (("reasonable", "reasonable"), ("reference", "agree_reference"), ("trap", "agree_trap")):
        applicable = notes[notes[column].isin(["yes", "no"])]
        hits = (applicable[column] == "yes").astype(float)
        w = applicable["key"].map(weights)
        pairs = applicable.pivot_table(index="question_id", columns="rater", values=column, aggfunc="first").dropna()
        first, second = pairs[1].to_numpy(), pairs[2].to_numpy()
        po = np.mean(first == second)
        pe = sum(np.mean(first == c) * np.mean(second == c) for c in ("yes", "no"))
        expected = {"sample_agreement": hits.mean(), "ipw_agreement": (hits * w).sum() / w.sum(),
                    "inter_annotator_agreement": po, "cohens_kappa": (po - pe) / (1 - pe)}
        rows = table[(table["cohort"] == "all") & (table["item"] == item)].set_index("statistic")
        for statistic, value in expected.items():
            assert rows.loc[statistic, "estimate"] == pytest.approx(value), (item, statistic)
            assert rows.loc[statistic, "ci_low"] <= value <= rows.loc[statistic, "ci_high"]
        # the planted rate is recovered: within the interval of the sample agreement
        planted = RATES[column]
        assert rows.loc["sample_agreement", "ci_low"] - 0.03 <= planted <= rows.loc["sample_agreement", "ci_high"] + 0.03
        assert rows.loc["sample_agreement", "n_assessments"] == len(applicable)
    judge = table[(table["item"] == "judge_accuracy") & (table["cohort"] == "all")]
    assert set(judge["judge_model"]) == {"sim:exact-match"}
    checks = frame(db, "select * from raw.judge_checks where human_accuracy_score is not null")
    assert judge.set_index("statistic").loc["sample_agreement", "estimate"] == pytest.approx(
        (checks["human_accuracy_score"] == checks["judge_accuracy_score"]).mean())
    report = hindsight(db, "report", "--out", str(tmp_path / "report")).output
    assert "report" in report
    page = (tmp_path / "report" / "index.html").read_text()
    assert "Human validation" in page and "Table G.1" in page and "design-weighted" in page
