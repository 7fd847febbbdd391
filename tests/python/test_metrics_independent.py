"""agg_metrics against an independent computation, on data the project was
not developed on: the real sepsis-40 cases with freshly generated questions,
answers from two labelled simulators, a replayed file of messy answer
formats and free-response judgments. The reference below re-implements the
paper's definitions in plain Python from the raw rows."""
from __future__ import annotations

import io
import random
import re
from collections import defaultdict
from contextlib import closing
from datetime import datetime

import duckdb
import numpy as np
import pandas as pd
import pytest

from conftest import (
    CELL,
    CUTS,
    FLAGS,
    METRICS,
    SEMANTIC_CELL,
    STATS,
    assert_dbt_passed,
    assert_slice_equals_mart,
    hindsight,
    metricflow_estimates,
    new_warehouse,
    query,
    require_shared,
    write_jsonl,
)
from ingest.publish.semantic import semantic_layer
from ingest.publish.slices import slice_metrics
from ingest.serve.snapshots import open_marts

pytestmark = pytest.mark.slow

ORDINAL = ["A. <10%", "B. 10-30%", "C. 31-60%", "D. >60%"]
CATEGORICAL = ["A. Pneumonia", "B. Urinary tract infection", "C. Cellulitis", "D. Cholangitis"]
TARGETS = ["accuracy"] * 2 + ["hindsight_bias"] * 3 + ["both"] * 5
FORMATS = ["true/false", "ordinal", "categorical", "free response", "true/false",
           "ordinal", "categorical", "true/false", "free response", "ordinal"]


def make_questions(rng, cases):
    questions = []
    for case_id, times in cases.items():
        for i, (target, kind) in enumerate(zip(TARGETS, FORMATS)):
            q = {"question_id": f"{case_id}-q{i}", "case_id": case_id, "cohort": "s40", "eval_target": target,
                 "question": f"Question {i} about the patient?",
                 "early_cutoff": {"event": "e", "time": times[min(len(times) - 1, (i + 1) * len(times) // 12)]}}
            if kind == "true/false":
                ref = rng.choice(["true", "false"])
                q.update(format="true/false", options=None, options_type=None, correct_answer=ref,
                         hindsight_trap="false" if ref == "true" else "true")
            elif kind == "ordinal":
                ref, trap = rng.choice([(0, 3), (3, 0)])
                q.update(format="multiple choice", options=ORDINAL, options_type="ordinal",
                         correct_answer=ORDINAL[ref], hindsight_trap=ORDINAL[trap])
            elif kind == "categorical":
                ref, trap = rng.sample(range(4), 2)
                q.update(format="multiple choice", options=CATEGORICAL, options_type="categorical",
                         correct_answer=CATEGORICAL[ref], hindsight_trap=CATEGORICAL[trap])
            else:
                q.update(format="free response", options=None, options_type=None,
                         correct_answer="Observation is enough.", hindsight_trap="Urgent surgery.")
            if target == "accuracy":
                q["hindsight_trap"] = None
            questions.append(q)
    return questions


def messy_answer(rng, q):
    if q["format"] == "free response":
        return rng.choice(["Observation is enough.", "Urgent surgery.", "Unclear."])
    if q["format"] == "true/false":
        return rng.choice(["true", "FALSE", "True.", "maybe"])
    option = rng.choice(q["options"])
    letter, text = option[0], option[3:]
    return rng.choice([option, letter, f"({letter})", f"{letter.lower()}.", text, f"{letter}) {text}", "none of these"])


# ---- the independent reference ------------------------------------------------------------

def normalise(q, text):
    if text is None:
        return None
    t = text.strip()
    if q["format"] == "true/false":
        m = re.fullmatch(r"(true|false)\.?", t.lower())
        return m.group(1) if m else None
    if q["format"] == "free response":
        return t or None
    for option in q["options"]:
        letter, body = option[0], option[3:]
        if t.lower() in (option.lower(), body.lower()) or re.fullmatch(r"\(?%s[.):]?" % letter, t, re.I) \
                or re.fullmatch(r"\(?%s[.):]\s*%s" % (letter, re.escape(body)), t, re.I):
            return letter
    return None


def score(q, answer, judge):
    norm = normalise(q, answer)
    ref, trap = normalise(q, q["correct_answer"]), normalise(q, q["hindsight_trap"])
    acc = htr = None
    if q["eval_target"] in ("accuracy", "both"):
        acc = judge.get("accuracy_score") if q["format"] == "free response" else float(norm is not None and norm == ref)
    if q["eval_target"] in ("hindsight_bias", "both"):
        if q["format"] == "free response":
            htr = judge.get("htr_score")
        elif norm is None:
            htr = 0.0
        elif q["options_type"] == "ordinal":
            pos = "ABCD".index
            htr = min(1.0, max(0.0, (pos(norm) - pos(ref)) / (pos(trap) - pos(ref))))
        else:
            htr = float(norm == trap)
    key = ("v:" + norm) if norm is not None else ("r:" + (answer or "").strip().lower())
    return acc, htr, key


@pytest.fixture(scope="module")
def unseen(tmp_path_factory):
    base = require_shared("t2s2-clinician", "annotations", "sepsis-40")
    db = new_warehouse(tmp_path_factory.mktemp("unseen"))
    hindsight(db, "load", "cases", "--cohort", "s40", "--narratives", base / "body",
        "--tts", f"H={base / 'sepsis-40_manual'}", "--tts", f"L={base / 'sepsis-40_gpt5_tts'}")
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("""select case_id, try_cast(trim(time_text) as double) t from raw.tts_records
                              where source = 'H' and t is not null order by all""").fetchall()
    cases = defaultdict(list)
    for case_id, t in rows:
        cases[case_id].append(t)
    rng = random.Random(7)
    questions = make_questions(rng, dict(sorted(cases.items())))
    hindsight(db, "load", "questions", write_jsonl(db.parent / "q.jsonl", questions))
    hindsight(db, "build")
    for model in ("sim:hindsight@0.4", "sim:noise@0.3"):
        hindsight(db, "answer", "--model", model, "--conditions", "2.1,2.2,0", "--variant", "standard")
    replay = [{"question_id": q["question_id"], "model": "replay:messy", "condition": "2.1", "visibility": vis,
               "prompt_variant": "warning", "answer": messy_answer(rng, q), "evidence": ""}
              for q in questions for vis in ("full", "masked")]
    hindsight(db, "load", "responses", write_jsonl(db.parent / "r.jsonl", replay))
    # judgments: sim:hindsight@0.4's written as `hindsight judge` writes them, sim:noise@0.3's loaded
    # from a file as another pipeline's (`hindsight load judgments`); the marts must treat both alike
    hindsight(db, "build", "--exclude", "resource_type:test", "resource_type:unit_test")
    external = []
    with duckdb.connect(str(db)) as con:
        responses = con.execute("select response_id, question_id, model, condition, visibility, prompt_variant, answer "
                                "from raw.responses").fetchall()
        by_id = {q["question_id"]: q for q in questions}
        judged_at = datetime(2026, 1, 1)
        individual = []
        for i, (rid, qid, model, condition, visibility, variant, _answer) in enumerate(responses):
            if by_id[qid]["format"] != "free response" or rng.random() >= 0.8:
                continue
            acc, htr = rng.choice([0, 0.5, 1]), rng.choice([0, 0.5, 1])
            if model == "sim:noise@0.3":
                external.append({"kind": "individual", "question_id": qid, "model": model, "condition": condition,
                                 "visibility": visibility, "prompt_variant": variant, "judge": "people:panel-1",
                                 "accuracy_score": acc, "htr_score": htr})
            else:
                individual.append((f"j{i}", "individual", rid, None, None, "judge:test", acc, htr,
                                   None, None, None, None, None, None, None, judged_at))
        con.executemany("insert into raw.judgments values (" + ", ".join("?" * 16) + ")", individual)
        cells = {(qid, m, c, v, p): rid for rid, qid, m, c, v, p, _ in responses}
        paired = []
        for (qid, m, c, v, p), rid in cells.items():
            if v == "full" and c != "0" and by_id[qid]["format"] == "free response" and (qid, m, c, "masked", p) in cells:
                equal, scores = rng.random() < 0.5, [rng.choice([0, 0.5, 1]) for _ in range(5)]
                if m == "sim:noise@0.3":
                    external.append({"kind": "paired", "question_id": qid, "model": m, "condition": c, "prompt_variant": p,
                                     "judge": "people:panel-1", "full_equals_masked": equal,
                                     **dict(zip(["full_accuracy_score", "masked_accuracy_score", "full_htr_score",
                                                 "masked_htr_score", "hbr_score"], scores))})
                else:
                    paired.append((f"p{len(paired)}", "paired", None, rid, cells[(qid, m, c, "masked", p)], "judge:test",
                                   None, None, equal, *scores, None, judged_at))
        con.executemany("insert into raw.judgments values (" + ", ".join("?" * 16) + ")", paired)
    assert external and individual and paired
    loaded = hindsight(db, "load", "judgments", write_jsonl(db.parent / "judgments.jsonl", external)).stdout
    assert f"{len(external)} judgments added" in loaded
    hindsight(db, "build")
    assert_dbt_passed(db)
    return db, by_id


def reference_values(db, questions):
    responses = query(db, "select response_id, question_id, model, condition, visibility, prompt_variant, answer from raw.responses")
    judgments = {r[0]: {"accuracy_score": r[1], "htr_score": r[2]} for r in
                 query(db, "select response_id, accuracy_score, htr_score from raw.judgments where kind = 'individual'")}
    paired = {(r[0], r[1]): r[2:] for r in query(db, """select full_response_id, masked_response_id, full_equals_masked,
              full_accuracy_score, masked_accuracy_score, full_htr_score, masked_htr_score, hbr_score
              from raw.judgments where kind = 'paired'""")}
    # judgments loaded from a file name their answers' cells; every cell here holds one answer, stored
    # before the judgments were loaded, so a cell names that answer
    cells = {tuple(r[1:6]): r[0] for r in responses}
    for qid, model, condition, visibility, variant, acc, htr in query(db, """select question_id, model, condition,
            visibility, prompt_variant, accuracy_score, htr_score from raw.loaded_judgments where kind = 'individual'"""):
        judgments[cells[(qid, model, condition, visibility, variant)]] = {"accuracy_score": acc, "htr_score": htr}
    for qid, model, condition, variant, *scores in query(db, """select question_id, model, condition, prompt_variant,
            full_equals_masked, full_accuracy_score, masked_accuracy_score, full_htr_score, masked_htr_score, hbr_score
            from raw.loaded_judgments where kind = 'paired'"""):
        paired[(cells[(qid, model, condition, "full", variant)], cells[(qid, model, condition, "masked", variant)])] = tuple(scores)
    values = []   # (model, condition, variant, metric, visibility, format, options_type, case_id, value)
    scored = {}
    for rid, qid, model, condition, visibility, variant, answer in responses:
        q = questions[qid]
        acc, htr, key = score(q, answer, judgments.get(rid, {}))
        scored[(qid, model, condition, visibility, variant)] = (rid, acc, htr, key)
        for metric, value in (("acc", acc), ("htr", htr)):
            if value is not None:
                values.append((model, condition, variant, metric, visibility, q, value))
    for (qid, model, condition, visibility, variant), (rid, acc_f, htr_f, key_f) in scored.items():
        if visibility != "full" or condition == "0" or (qid, model, condition, "masked", variant) not in scored:
            continue
        q = questions[qid]
        mid, acc_m, htr_m, key_m = scored[(qid, model, condition, "masked", variant)]
        # §3.7.2 from the paper's equations: a free-response pair takes its four scores and
        # "answers equal" from the paired judgment (a judge returns all of them whatever the target)
        air = float(key_f != key_m)
        if q["format"] == "free response":
            judged = paired.get((rid, mid))
            air = None if judged is None else 1.0 - float(judged[0])
            if judged is not None:
                acc_f, acc_m, htr_f, htr_m = (judged[1] if judged[1] is not None else acc_f,
                                              judged[2] if judged[2] is not None else acc_m,
                                              judged[3] if judged[3] is not None else htr_f,
                                              judged[4] if judged[4] is not None else htr_m)
        # ... and a metric counts only the questions whose eval target defines it: Acc and dAcc over
        # accuracy and both, HTR and dHTR over hindsight_bias and both, HBR (eq. 6) over both only
        uses_acc, uses_htr = q["eval_target"] in ("accuracy", "both"), q["eval_target"] in ("hindsight_bias", "both")
        pair = {"delta_acc": acc_m - acc_f if uses_acc and None not in (acc_m, acc_f) else None,
                "delta_htr": htr_f - htr_m if uses_htr and None not in (htr_f, htr_m) else None,
                "air": air,
                "hbr": (1.0 if acc_m == 1 else 0.0) * htr_f
                       if q["eval_target"] == "both" and None not in (acc_m, htr_f) else None}
        for metric, value in pair.items():
            if value is not None:
                values.append((model, condition, variant, metric, "paired", q, value))
    return values


def test_agg_metrics_equal_the_independent_computation(unseen):
    db, questions = unseen
    values = reference_values(db, questions)
    cells = defaultdict(list)
    for model, condition, variant, metric, visibility, q, value in values:
        cells[(model, condition, variant, metric, visibility)].append((q["case_id"], value))
    mart = {tuple(r[:5]): r[5:] for r in query(db, """
        select model, condition, prompt_variant, metric, visibility, estimate, n_questions, n_cases, se_clustered
        from agg_metrics where cohort = 's40'""")}
    assert set(mart) == set(cells)
    assert len(cells) > 40
    for cell, items in cells.items():
        estimate, n_questions, n_cases, se = mart[cell]
        mean = sum(v for _, v in items) / len(items)
        assert estimate == pytest.approx(mean, abs=1e-12), cell
        assert n_questions == len(items) and n_cases == len({c for c, _ in items}), cell
        by_case = defaultdict(list)
        for case_id, value in items:
            by_case[case_id].append(value)
        miller = np.sqrt(sum((sum(vs) - len(vs) * mean) ** 2 for vs in by_case.values())) / len(items)
        assert se == pytest.approx(miller, abs=1e-12), cell


@pytest.mark.parametrize("mart, slices", [("agg_metrics_by_format", ["format", "options_type"]),
                                           ("agg_metrics_by_eval_target", ["eval_target"])])
def test_sliced_marts_equal_the_independent_computation(unseen, mart, slices):
    db, questions = unseen
    cells = defaultdict(list)
    for model, condition, variant, metric, visibility, q, value in reference_values(db, questions):
        cells[(model, condition, variant, metric, visibility, *(q[s] for s in slices))].append(value)
    width = 5 + len(slices)
    rows = {tuple(r[:width]): r[width] for r in query(db, f"""
        select model, condition, prompt_variant, metric, visibility, {", ".join(slices)}, estimate
        from {mart}""")}
    assert set(rows) == set(cells)
    for cell, items in cells.items():
        assert rows[cell] == pytest.approx(sum(items) / len(items), abs=1e-12), cell


def test_intervals_equal_a_replicate_loop_over_the_sql_draws(unseen):
    db, questions = unseen
    draws = defaultdict(dict)
    for replicate, case_id, multiplicity in query(db, "select replicate, case_id, multiplicity from fct_bootstrap_samples where cohort = 's40'"):
        draws[replicate][case_id] = multiplicity
    cells = defaultdict(lambda: defaultdict(list))
    for model, condition, variant, metric, visibility, q, value in reference_values(db, questions):
        if model == "replay:messy" and metric in ("htr", "air"):
            cells[(model, condition, variant, metric, visibility)][q["case_id"]].append(value)
    mart = {tuple(r[:5]): r[5:] for r in query(db, """
        select model, condition, prompt_variant, metric, visibility, ci_low, ci_high from agg_metrics""")}
    assert len(draws) == 2000 and len(cells) == 3
    for cell, by_case in cells.items():
        estimates = []
        for replicate in range(2000):
            total = sum(m * sum(by_case.get(c, [])) for c, m in draws[replicate].items())
            count = sum(m * len(by_case.get(c, [])) for c, m in draws[replicate].items())
            if count:
                estimates.append(total / count)
        low, high = np.percentile(estimates, [2.5, 97.5])
        assert mart[cell] == pytest.approx((low, high), abs=1e-12), cell


def test_planted_hindsight_rate_is_recovered(unseen):
    db, _ = unseen
    rows = dict(query(db, """
        select metric || '/' || visibility, estimate from agg_metrics
        where model = 'sim:hindsight@0.4' and condition = '2.1'"""))
    cis = dict((r[0], r[1:]) for r in query(db, """
        select metric || '/' || visibility, ci_low, ci_high from agg_metrics
        where model = 'sim:hindsight@0.4' and condition = '2.1'"""))
    # structured trap-bearing questions (free response is judged at random here, so excluded)
    structured = dict(query(db, """
        select metric, sum(estimate * n_questions) / sum(n_questions) from agg_metrics_by_format
        where model = 'sim:hindsight@0.4' and condition = '2.1' and format <> 'free response'
          and metric in ('delta_htr', 'hbr') group by metric"""))
    assert rows["htr/masked"] < 0.2 and rows["acc/masked"] > 0.55
    assert structured["delta_htr"] == pytest.approx(0.4, abs=0.08)
    assert structured["hbr"] == pytest.approx(0.4, abs=0.1)
    low, high = cis["delta_htr/paired"]
    assert low > 0                      # a planted effect is detected


@pytest.mark.parametrize("mart, columns, semantic", CUTS)
def test_any_slice_gives_the_marts_numbers_for_their_cuts(unseen, mart, columns, semantic):
    db, _ = unseen
    with closing(open_marts(db)) as con:
        expected = con.sql(f"select metric, {', '.join(CELL + columns)}, {', '.join(STATS + FLAGS)} from {mart}").df()
        sliced = slice_metrics(METRICS, SEMANTIC_CELL + semantic, con=con)
        assert assert_slice_equals_mart(sliced, expected, CELL + columns, SEMANTIC_CELL + semantic) == len(expected) > 40
    if mart == "agg_metrics":       # MetricFlow's answer for the same cut (it reads the warehouse)
        answered = metricflow_estimates(db, db.parent / "mf.csv")
        merged = expected.merge(answered, on=["metric", *CELL], how="left", suffixes=("_mart", "_mf"))
        assert merged["estimate_mf"].notna().all()
        assert np.allclose(merged["estimate_mf"], merged["estimate_mart"], atol=1e-12, rtol=0)
    with closing(open_marts(db)) as con:
        # the parts mart rolled up with the declared expressions: the same estimates
        for metric in semantic_layer().metrics.values():
            rolled = dict(((*r[:-1],), r[-1]) for r in con.execute(f"""
                select {', '.join(CELL + columns)}, {metric.bi_expression()} from fct_metric_parts
                where visibility in ({', '.join(f"'{v}'" for v in metric.visibilities)})
                group by all having sum({metric.denominator}) > 0""").fetchall())
            cells = expected[expected["metric"] == metric.name]
            assert len(rolled) == len(cells) > 0, metric.name
            for row in cells.itertuples(index=False):
                key = tuple(None if pd.isna(v) else v for v in (getattr(row, c) for c in CELL + columns))
                assert rolled[key] == pytest.approx(row.estimate, abs=1e-12), (metric.name, key)


def _band(relpos):
    return None if relpos is None else "early" if relpos < 1 / 3 else "middle" if relpos < 2 / 3 else "late"


@pytest.mark.parametrize("by", [["model", "relpos_band"], ["model", "format", "relpos_band"]])
def test_a_new_slice_equals_an_independent_computation_with_intervals_from_the_stored_replicates(unseen, by):
    """Delta-HTR and Acc by RelPos band x model, and a three-dimension slice: estimates and counts from
    the raw rows in plain Python; the intervals a replicate loop over fct_bootstrap_samples gives."""
    db, questions = unseen
    bands = {qid: _band(relpos) for qid, relpos in query(db, "select question_id, relpos from dim_questions")}
    cells = defaultdict(list)
    for model, _condition, variant, metric, visibility, q, value in reference_values(db, questions):
        if metric in ("delta_htr", "acc"):
            values = {"model": model, "format": q["format"], "relpos_band": bands[q["question_id"]]}
            cells[(metric, *(values[d] for d in by), variant, visibility)].append((q["case_id"], value))
    with closing(open_marts(db)) as con:
        sliced = slice_metrics(["delta_htr", "acc"], by, con=con)
    names = ["metric", *(semantic_layer().dimension(d).name for d in by), "answer__prompt_variant", "answer__visibility"]
    got = {tuple(None if pd.isna(v) else v for v in r[:len(names)]): r for r in sliced[sliced["n_questions"] > 0].itertuples(index=False)}
    assert set(got) == set(cells) and len(cells) > 20
    for cell, items in cells.items():
        row = got[cell]
        assert row.estimate == pytest.approx(sum(v for _, v in items) / len(items), abs=1e-12), cell
        assert row.n_questions == len(items) and row.n_cases == len({c for c, _ in items}), cell
    # the intervals: the percentile of a replicate loop over the SQL draws, for three cells
    draws = defaultdict(dict)
    for replicate, case_id, multiplicity in query(db, "select replicate, case_id, multiplicity from fct_bootstrap_samples where cohort = 's40'"):
        draws[replicate][case_id] = multiplicity
    for cell in sorted((c for c in cells if len({case for case, _ in cells[c]}) >= 5), key=str)[:3]:
        by_case = defaultdict(list)
        for case_id, value in cells[cell]:
            by_case[case_id].append(value)
        estimates = []
        for replicate in range(2000):
            count = sum(m * len(by_case.get(c, [])) for c, m in draws[replicate].items())
            if count:
                estimates.append(sum(m * sum(by_case.get(c, [])) for c, m in draws[replicate].items()) / count)
        assert (got[cell].ci_low, got[cell].ci_high) == pytest.approx(tuple(np.percentile(estimates, [2.5, 97.5])), abs=1e-12), cell


def test_a_comparison_of_two_models_equals_an_independent_computation_over_the_stored_replicates(unseen):
    """ΔHTR and Acc of sim:hindsight@0.4 minus sim:noise@0.3 per condition, on the questions both
    answered: the differences from the raw rows in plain Python, the intervals the percentiles of a
    replicate loop over fct_bootstrap_samples, and `hindsight metrics --compare` prints the same."""
    db, questions = unseen
    arms = defaultdict(dict)
    for model, condition, variant, metric, visibility, q, value in reference_values(db, questions):
        if metric in ("delta_htr", "acc") and model in ("sim:hindsight@0.4", "sim:noise@0.3"):
            arms[(metric, condition, variant, visibility)].setdefault(model, {})[q["question_id"]] = (q["case_id"], value)
    draws = defaultdict(dict)
    for replicate, case_id, multiplicity in query(db, "select replicate, case_id, multiplicity from fct_bootstrap_samples where cohort = 's40'"):
        draws[replicate][case_id] = multiplicity
    with closing(open_marts(db)) as con:
        compared = slice_metrics(["delta_htr", "acc"], ["condition"], con=con, compare="model=sim:hindsight@0.4,sim:noise@0.3")
    got = {(r.metric, r.condition, r.answer__prompt_variant, r.answer__visibility): r for r in compared.itertuples()}
    cells = {cell: sides for cell, sides in arms.items() if len(sides) == 2}
    assert set(got) == set(cells) and len(cells) >= 6
    for cell, sides in cells.items():
        a, b = sides["sim:hindsight@0.4"], sides["sim:noise@0.3"]
        shared = sorted(set(a) & set(b))
        row = got[cell]
        difference = sum(a[q][1] for q in shared) / len(shared) - sum(b[q][1] for q in shared) / len(shared)
        assert row.n_questions == len(shared) and row.difference == pytest.approx(difference, abs=1e-12), cell
        sums = {name: defaultdict(lambda: [0.0, 0]) for name in ("a", "b")}
        for q in shared:
            for name, side in (("a", a), ("b", b)):
                sums[name][side[q][0]][0] += side[q][1]
                sums[name][side[q][0]][1] += 1
        differences = []
        for replicate in range(2000):
            totals = {name: [sum(m * sums[name][c][i] for c, m in draws[replicate].items() if c in sums[name]) for i in (0, 1)]
                      for name in ("a", "b")}
            if totals["a"][1]:
                differences.append(totals["a"][0] / totals["a"][1] - totals["b"][0] / totals["b"][1])
        assert (row.ci_low, row.ci_high) == pytest.approx(tuple(np.percentile(differences, [2.5, 97.5])), abs=1e-12), cell
    printed = pd.read_csv(io.StringIO(hindsight(db, "metrics", "--metric", "delta_htr,acc", "--by", "condition", "--compare",
                                                "model=sim:hindsight@0.4,sim:noise@0.3", "--format", "csv").stdout),
                          dtype={"condition": str})
    assert np.allclose(printed["ci_low"], compared["ci_low"], atol=1e-12, equal_nan=True)
    assert np.allclose(printed["difference"], compared["difference"], atol=1e-12)
