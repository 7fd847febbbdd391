"""Any slice of the metrics, on the demo warehouse: `hindsight metrics` and slice_metrics give the
marts' numbers for the marts' cuts, the parts mart and MetricFlow the same estimates, and a bad
metric, dimension or --where ends in one line. The same on the real data, against an independent
computation: tests/python/test_metrics_independent.py."""
from __future__ import annotations

import csv
import io
import json
import re
import shlex
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from conftest import (
    CELL,
    CUTS,
    FLAGS,
    METRICS,
    PROJECT,
    SEMANTIC_CELL,
    STATS,
    assert_slice_equals_mart,
    cli_env,
    hindsight,
    metricflow,
    metricflow_estimates,
)
from ingest.publish.semantic import semantic_layer
from ingest.publish.slices import slice_metrics
from ingest.serve.snapshots import open_marts

pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def demo(demo_warehouse):
    return demo_warehouse[0]


@pytest.mark.parametrize("mart, columns, semantic", CUTS)
def test_the_marts_cuts_give_the_marts_numbers(demo, mart, columns, semantic):
    with closing(open_marts(demo)) as con:
        expected = con.sql(f"select metric, {', '.join(CELL + columns)}, {', '.join(STATS + FLAGS)} from {mart}").df()
        sliced = slice_metrics(METRICS, SEMANTIC_CELL + semantic, con=con)
    # the marts' options_type is NULL where a question has none, as the dimension is
    assert assert_slice_equals_mart(sliced, expected, CELL + columns, SEMANTIC_CELL + semantic) == len(expected) > 50


def test_the_parts_mart_rolls_up_to_the_marts_estimates_with_the_declared_expressions(demo):
    layer = semantic_layer()
    with closing(open_marts(demo)) as con:
        for metric in layer.metrics.values():
            visibilities = ", ".join(f"'{v}'" for v in metric.visibilities)
            rolled = con.sql(f"""
                select cohort, model, condition, prompt_variant, visibility, {metric.bi_expression()} as estimate,
                    sum({metric.denominator}) as n_questions, sum({metric.valid}) as n_valid
                from fct_metric_parts where visibility in ({visibilities}) group by all having sum({metric.denominator}) > 0""").df()
            expected = con.sql(f"""select cohort, model, condition, prompt_variant, visibility, estimate, n_questions, n_valid
                                   from agg_metrics where metric = '{metric.name}'""").df()
            merged = expected.merge(rolled, on=CELL, how="outer", suffixes=("_mart", ""), indicator=True)
            assert (merged["_merge"] == "both").all() and len(merged) > 10, metric.name
            assert np.allclose(merged["estimate"], merged["estimate_mart"], atol=1e-12, rtol=0), metric.name
            assert (merged["n_questions"] == merged["n_questions_mart"]).all() and (merged["n_valid"] == merged["n_valid_mart"]).all()


def test_metricflow_answers_the_marts_cut_with_the_marts_estimates(demo, tmp_path):
    """`mf query` on the demo warehouse (its own parse of the project; it reads the warehouse)."""
    answered = metricflow_estimates(demo, tmp_path / "mf.csv")
    with closing(open_marts(demo)) as con:
        expected = con.sql("select metric, cohort, model, condition, prompt_variant, visibility, estimate from agg_metrics").df()
    merged = expected.merge(answered, on=["metric", *CELL], how="left", suffixes=("_mart", ""))
    assert merged["estimate"].notna().all() and len(merged) > 50
    assert np.allclose(merged["estimate"], merged["estimate_mart"], atol=1e-12, rtol=0)


def test_dim_metrics_labels_and_definitions_are_the_declarations(demo):
    layer = semantic_layer()
    with closing(open_marts(demo)) as con:
        rows = con.execute("select metric, label, definition, visibilities from dim_metrics").fetchall()
    assert {r[0] for r in rows} == set(layer.metrics) == set(METRICS)
    for metric, label, definition, visibilities in rows:
        declared = layer.metrics[metric]
        assert (label, definition, visibilities) == (declared.label, declared.description, "|".join(declared.visibilities)), metric


def test_the_cli_slices_in_every_format(demo, tmp_path):
    args = ["metrics", "--metric", "delta_htr,acc", "--by", "model,condition,relpos_band", "--where", "cohort = 'sepsis'"]
    as_csv = list(csv.DictReader(io.StringIO(hindsight(demo, *args, "--format", "csv").stdout)))
    as_json = json.loads(hindsight(demo, *args, "--format", "json").stdout)
    hindsight(demo, *args, "--format", "parquet", "--out", tmp_path / "s.parquet")
    as_parquet = pd.read_parquet(tmp_path / "s.parquet")
    table = hindsight(demo, *args).stdout
    assert len(as_csv) == len(as_json) == len(as_parquet) > 20 and f"({len(as_csv)} cells; interval: percentile)" in table
    assert {r["metric"] for r in as_csv} == {"delta_htr", "acc"}
    assert {r["question__relpos_band"] for r in as_csv} <= {"early", "middle", "late", ""}
    # acc keeps full and masked apart, and the prompt variants are never pooled
    assert {r["answer__visibility"] for r in as_csv if r["metric"] == "acc"} == {"full", "masked"}
    assert {r["answer__prompt_variant"] for r in as_csv} == {"standard", "warning"}
    # a cell with no value says why, with its counts
    empty = [r for r in as_json if r["n_questions"] == 0]
    assert all(r["estimate"] is None and r["reason"].startswith("no question") and r["n_answers"] > 0 for r in empty)


@pytest.mark.parametrize("args, message", [
    (["--metric", "delta_hrt", "--by", "model"], "unknown metric 'delta_hrt'. Fix: use one of acc, htr, delta_acc, delta_htr, air, hbr"),
    (["--metric", "acc", "--by", "modell"], "unknown dimension 'modell'. Fix: use one of "),
    (["--metric", "acc", "--where", "1 = 1; drop table fct_answers"], "--where: 2 statements, not one condition"),
    (["--metric", "acc", "--where", "case_id in (select * from read_csv('/etc/passwd'))"], "reading files or URLs"),
    (["--metric", "acc", "--where", "no_such_column = 1"], "Referenced column \"no_such_column\" not found"),
    # the pasted text cannot close the slice's parenthesis and open its own condition
    (["--metric", "acc", "--where", "cohort = 'sepsis') or (1 = 1"], "--where: not one condition"),
    (["--metric", "acc", "--where", "cohort = 'sepsis"], "--where: not one condition: it cannot be read word by word (an unclosed quote?)"),
    (["--metric", "acc", "--where", "(" * 500 + "1 = 1" + ")" * 500], "--where: not one condition: nested too deeply to read"),
    (["--metric", "acc", "--where", "nofunc(cohort) = 'x'"], "Fix: use one of DuckDB's functions"),
    (["--metric", "acc", "--where", "cohort = 'no such cohort'"], "no rows match --where (cohort = 'no such cohort')"),
    (["--metric", "acc", "--format", "csv", "--out", "/no/such/folder/x.csv"], "--out: the folder /no/such/folder does not exist"),
    (["--metric", "acc", "--timeout", "1", "--where", "exists (select 1 from range(100000000000) as r(x) where x < 0)"],
     "ran longer than its time limit of 1 s and was stopped"),
])
def test_a_bad_metric_dimension_or_where_ends_in_one_line(demo, args, message):
    done = hindsight(demo, "metrics", *args, expect=2)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr, done.stderr
    if "unknown dimension" in message:
        assert "question__relpos_band" in lines[0] and "case__cohort" in lines[0]
    if "Referenced column" in message:      # the dimensions' own names, never a renamed duplicate
        assert "_1" not in lines[0] and "Fix: name the dimensions as `hindsight metrics --list` shows them" in lines[0]


def test_where_keeps_its_meaning_with_comments_and_keyword_names(demo):
    """A trailing comment, a dimension named as a keyword (`case`, `format`) and a block comment mean
    what they say: the same cells as the plain condition."""
    def cells(where):
        return json.loads(hindsight(demo, "metrics", "--metric", "delta_htr", "--by", "model", "--where", where,
                                    "--format", "json").stdout)
    plain = cells("cohort = 'sepsis'")
    assert cells("cohort = 'sepsis' -- only sepsis") == plain and cells("/* mine */ cohort = 'sepsis'") == plain
    with closing(open_marts(demo)) as con:
        case, = con.execute("select min(cohort || '/' || case_id) from fct_metric_parts").fetchone()
        fmt, = con.execute("select min(format) from fct_metric_parts").fetchone()
    by_case = cells(f"case = '{case}'")
    assert by_case == cells(f"case_id = '{case.split('/', 1)[1]}' and cohort = '{case.split('/')[0]}'")
    assert all(r["n_cases"] == 1 for r in by_case)
    assert cells(f"format = '{fmt}'") == cells(f"question__format = '{fmt}'")


def test_one_case_cells_have_no_se_or_mde_and_json_keeps_full_precision(demo):
    rows = json.loads(hindsight(demo, "metrics", "--metric", "delta_htr", "--by", "model,case", "--format", "json").stdout)
    single = [r for r in rows if r["n_cases"] == 1 and r["n_questions"] > 0]
    assert single and all(r["se_clustered"] is None and r["mde_80"] is None and r["ci_low"] is None for r in single)
    assert all("1 case" in r["reason"] for r in single)
    with closing(open_marts(demo)) as con:
        exact = slice_metrics(["delta_htr"], ["model", "case"], con=con)
    assert [r["estimate"] for r in rows] == [None if pd.isna(v) else float(v) for v in exact["estimate"]]
    assert any(len(repr(r["estimate"])) > 14 for r in rows)         # more than the 10 decimals to_json kept


def test_list_shows_the_short_names_by_and_where_take(demo):
    listed = hindsight(demo, "metrics", "--list").stdout
    rows = {line.split()[0]: line.split()[1] for line in listed.splitlines()
            if line.startswith("  ") and "__" in line.split()[0]}
    assert rows["question__relpos_band"] == "relpos_band" and rows["case__cohort"] == "cohort"
    assert rows["question__format"] == "format" and rows["answer__prompt_variant"] == "prompt_variant"


def test_slice_metrics_on_the_connection_the_docs_open_leaves_it_as_it_was(demo):
    """The notebook call of docs/slicing.md: a plain read-only connection to the serving file."""
    serve = demo.parent / "warehouse.marts.duckdb"
    con = duckdb.connect(str(serve), read_only=True)
    try:
        before = con.execute("select current_setting('enable_external_access')").fetchone()
        frame = slice_metrics(["delta_htr", "acc"], by=["model", "question__relpos_band"], where="cohort = 'sepsis'", con=con)
        assert len(frame) > 10 and frame["significant"].any()
        assert con.execute("select current_setting('enable_external_access')").fetchone() == before == (True,)
        assert con.execute("select count(*) from duckdb_tables() where temporary").fetchone() == (0,)
        assert con.execute("select count(*) from duckdb_views() where view_name like 'slice_%'").fetchone() == (0,)
        assert con.execute("select count(*) from fct_answers").fetchone()[0] > 0      # the caller's reads still work
    finally:
        con.close()         # (one configuration per file and process: the pinned reader's differs)
    with closing(open_marts(demo)) as pinned:
        pd.testing.assert_frame_equal(frame, slice_metrics(["delta_htr", "acc"], ["model", "question__relpos_band"],
                                                           "cohort = 'sepsis'", con=pinned))


def test_reading_while_the_warehouse_is_held_neither_waits_nor_fails(demo, tmp_path):
    """A writer holding the warehouse (a build) does not stop a slice: it reads the snapshot."""
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
                               "print('open', flush=True); sys.stdin.read()", str(demo)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        done = hindsight(demo, "metrics", "--metric", "air", "--by", "model", "--format", "csv",
                         env={"HINDSIGHT_LOCK_WAIT": "0"})
        assert len(done.stdout.splitlines()) > 4
        with pytest.raises(duckdb.IOException):
            duckdb.connect(str(demo), read_only=True)            # the warehouse itself is held
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)


def test_metricflow_validates_the_semantic_layer(tmp_path):
    """`mf validate-configs`: the semantic models and metrics parse and are consistent (no warehouse read)."""
    done = metricflow(tmp_path / "w.duckdb", "validate-configs", "--skip-dw")
    text = done.stdout + done.stderr
    assert done.returncode == 0 and "ERRORS: 0" in text and "Successfully validated the semantics" in text, text[-3000:]


def documented(page: str, marker: str, language: str) -> list[str]:
    blocks = re.findall(rf"<!-- {marker}: run by tests/python/test_slices.py -->\s*```{language}\n(.*?)```",
                        (PROJECT / page).read_text(), re.S)
    return blocks


def test_the_documented_notebook_recipes_run_as_written(demo):
    """Every notebook block of the README, docs/analyst-access.md and docs/slicing.md, as written, in
    the folder of a built demo (where warehouse.marts.duckdb is)."""
    blocks = {page: documented(page, "notebook", "python") for page in ("README.md", "docs/analyst-access.md", "docs/slicing.md")}
    assert all(blocks.values()), blocks
    for page, found in blocks.items():
        for block in found:
            done = subprocess.run([sys.executable, "-c", block], cwd=demo.parent, capture_output=True, text=True,
                                  env=cli_env(demo), timeout=300)
            assert done.returncode == 0, f"{page}:\n{block}\n{done.stderr[-3000:]}"
    shown = subprocess.run([sys.executable, "-c", blocks["docs/slicing.md"][0]], cwd=demo.parent, capture_output=True,
                           text=True, env=cli_env(demo)).stdout
    assert "delta_htr" in shown and "sim:hindsight@0.3" in shown and re.search(r"\('[0-9a-f-]{36}',\)", shown)


def test_the_documented_slice_and_sql_commands_run_as_written(demo, tmp_path):
    """docs/slicing.md's slices and docs/analyst-access.md's SQL and export, as written."""
    blocks = (documented("docs/slicing.md", "slice-commands", "sh") + documented("docs/analyst-access.md", "slice-commands", "sh")
              + documented("docs/slicing.md", "compare-commands", "sh"))
    commands = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines() if line.startswith("hindsight ")]
    assert len(commands) == 10
    printed = {}
    for command in commands:
        program, *args = shlex.split(command)          # the environment's own hindsight, as if activated
        done = subprocess.run([str(Path(sys.executable).with_name(program)), *args], cwd=tmp_path, env=cli_env(demo),
                              capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.strip(), f"{command}: {done.stderr[-2000:]}"
        printed[command] = done
    # the comparison the docs show, as they show it: its first row, the family, the models left out
    shown = documented("docs/slicing.md", "compare-output", "")[0].splitlines()
    compared = printed[commands[8]].stdout.splitlines()
    for doc, real in ((shown[0], compared[0]), (shown[1], compared[1])):       # the columns shown, in order
        words = iter(real.split())
        assert all(word in words for word in doc.split()), (doc, real)
    assert shown[-1] == compared[-1]
    assert printed[commands[9]].stderr == ("left out of acc (prompt_variant warning has no row here): model=sim:hindsight@0.6, "
                                           "sim:noise@0.2, sim:prospective; visibility=full, masked\n")
    assert len(pd.read_csv(tmp_path / "air.csv")) > 10 and len(pd.read_csv(tmp_path / "audit.csv")) > 3
    assert (tmp_path / "export" / "manifest.json").is_file()


def test_comparing_the_prompt_variants_equals_a_replicate_loop_over_the_stored_draws(demo):
    """ΔHTR, standard minus warning prompt, per model and condition, on the question rows both have: a loop over
    fct_metric_parts' rows and fct_bootstrap_samples gives the same difference and interval."""
    with closing(open_marts(demo)) as con:
        compared = slice_metrics(["delta_htr"], ["model", "condition"], con=con, compare="prompt_variant=standard,warning")
        rows = con.execute("""select model, cohort, case_id, question_id, condition, prompt_variant, delta_htr_sum
                              from fct_metric_parts where visibility = 'paired' and delta_htr_n = 1""").fetchall()
        draws = con.execute("select replicate, cohort, case_id, multiplicity from fct_bootstrap_samples").fetchall()
    by_replicate = {}
    for replicate, cohort, case_id, multiplicity in draws:
        by_replicate.setdefault(replicate, {})[(cohort, case_id)] = multiplicity
    values = {}
    for model, cohort, case_id, question_id, condition, variant, value in rows:
        values.setdefault(model, {}).setdefault(variant, {})[(question_id, condition)] = ((cohort, case_id), value)
    # the models without warning rows are rows of their own that say so, not dropped silently
    gone = compared[compared["n_questions"] == 0]
    without = sorted(m for m in values if "warning" not in values[m])
    assert without and sorted(set(gone["model"])) == without
    assert (gone["reason"] == "prompt_variant warning has no row here: left out of the comparison").all()
    assert gone["difference"].isna().all() and not gone["significant_unadjusted"].any()
    whole, compared = compared, compared[compared["n_questions"] > 0]
    assert len(compared) >= 5
    for row in compared.itertuples():
        standard, warning = values[row.model]["standard"], values[row.model]["warning"]
        shared = sorted(k for k in set(standard) & set(warning) if k[1] == row.condition)
        assert row.n_questions == len(shared)
        differences = []
        for replicate in sorted(by_replicate):
            weights = by_replicate[replicate]
            totals = [sum(weights.get(side[k][0], 0) * side[k][1] for k in shared) for side in (standard, warning)]
            count = sum(weights.get(standard[k][0], 0) for k in shared)
            if count:
                differences.append((totals[0] - totals[1]) / count)
        point = (sum(standard[k][1] for k in shared) - sum(warning[k][1] for k in shared)) / len(shared)
        assert row.difference == pytest.approx(point, abs=1e-12)
        assert (row.ci_low, row.ci_high) == pytest.approx(tuple(np.percentile(differences, [2.5, 97.5])), abs=1e-12)
    printed = json.loads(hindsight(demo, "metrics", "--metric", "delta_htr", "--by", "model,condition", "--compare",
                                   "prompt_variant=standard,warning", "--format", "json").stdout)
    assert [r["ci_low"] for r in printed] == [None if pd.isna(v) else v for v in whole["ci_low"]]
    assert hindsight(demo, "metrics", "--metric", "acc", "--compare", "cohort=a,b", expect=2).stderr.count("\n") == 1


A, B = "sim:hindsight@0.6", "sim:prospective"


def test_a_comparison_flags_adjusts_and_says_what_it_left_out_by_hand(demo):
    """--compare on the demo against hand computations: the rows and cases each arm lost (B's rows of one
    case left out by --where), the stratified SE from the per-case sums, Holm and Benjamini-Hochberg per
    family, and the few-cases flag from dim_interval_trust."""
    where = f"model <> '{B}' or case_id <> 'demo-sepsis-01'"
    with closing(open_marts(demo)) as con:
        holm = slice_metrics(["delta_htr", "acc"], ["condition"], where, con=con, compare=f"model={A},{B}")
        bh = slice_metrics(["delta_htr", "acc"], ["condition"], where, con=con, compare=f"model={A},{B}", adjust="bh")
        parts = con.sql(f"""select model, cohort, case_id, question_id, condition, visibility, delta_htr_sum, delta_htr_n,
                                   acc_sum, acc_n from fct_metric_parts where model in ('{A}', '{B}')""").df()
        trusted = con.sql("select * from dim_interval_trust where ci_method = 'percentile' and kind = 'difference'").df()
    assert len(holm) > 10 and (holm["ci_method"] == "percentile").all()
    sizes = parts.groupby("cohort")["case_id"].nunique().to_dict()
    for row in holm.itertuples():
        metric = "delta_htr" if row.metric == "delta_htr" else "acc"
        mine = parts[(parts["condition"] == row.condition) & (parts["visibility"] == row.answer__visibility)
                     & (parts[f"{metric}_n"] > 0)]
        a, b = mine[mine["model"] == A], mine[(mine["model"] == B) & (mine["case_id"] != "demo-sepsis-01")]
        keys = ["question_id", "condition", "visibility"]
        shared = a.merge(b, on=keys, suffixes=("_a", "_b"))
        assert row.rows_lost_a == len(a) - len(shared) == len(a[a["case_id"] == "demo-sepsis-01"]) > 0
        assert row.cases_lost_a == 1 and row.rows_lost_b == row.cases_lost_b == 0
        assert row.n_questions == len(shared) and row.n_cases == shared["case_id_a"].nunique() == 7
        # the stratified linearised SE, case by case
        total_a, total_b = shared[f"{metric}_n_a"].sum(), shared[f"{metric}_n_b"].sum()
        est_a, est_b = shared[f"{metric}_sum_a"].sum() / total_a, shared[f"{metric}_sum_b"].sum() / total_b
        assert row.estimate_a == pytest.approx(est_a, abs=1e-12) and row.difference == pytest.approx(est_a - est_b, abs=1e-12)
        variance = 0.0
        for cohort, n in sizes.items():
            u = []
            for case in sorted(parts.loc[parts["cohort"] == cohort, "case_id"].unique()):
                here = shared[shared["case_id_a"] == case]
                u.append((here[f"{metric}_sum_a"].sum() - here[f"{metric}_n_a"].sum() * est_a) / total_a
                         - (here[f"{metric}_sum_b"].sum() - here[f"{metric}_n_b"].sum() * est_b) / total_b)
            mean = sum(u) / n
            variance += n / (n - 1) * sum((v - mean) ** 2 for v in u)
        assert row.se_clustered == pytest.approx(variance ** 0.5, rel=1e-9)
        # too few cases for a percentile interval of a difference: the band of 7 cases, in words
        band = trusted[(trusted["from_cases"] <= 7) & (trusted["below_cases"] > 7)].iloc[0]
        assert row.few_cases and row.caution == (
            f"few cases (7): a percentile interval over {band.from_cases}-{band.below_cases - 1} cases covered "
            f"{round(band.mean_coverage * 100)}%, not 95%, in the coverage bench (it holds from {band.min_cases})")
    for frame, method in ((holm, "holm"), (bh, "bh")):
        assert (frame["adjustment"] == method).all()
        for metric, family in frame.groupby("metric"):
            p = family["p_unadjusted"].to_numpy()
            order, m = np.argsort(p, kind="stable"), len(p)
            if method == "holm":
                running, expected = 0.0, np.empty(m)
                for rank, i in enumerate(order):
                    running = max(running, min(1.0, (m - rank) * p[i]))
                    expected[i] = running
            else:
                running, expected = 1.0, np.empty(m)
                for rank in range(m - 1, -1, -1):
                    running = min(running, m / (rank + 1) * p[order[rank]])
                    expected[order[rank]] = running
            assert family["p_adjusted"].to_numpy() == pytest.approx(expected, abs=1e-15)
            assert (family["significant_adjusted"] == family["significant_unadjusted"] & (family["p_adjusted"] < 0.05)).all()
            assert family["family"].nunique() == 1
            assert family["family"].iloc[0] == f"{metric}, model {A} - {B}: {m} cells by condition, prompt_variant, visibility"
    # the unadjusted p is the interval inverted: significant where p < 0.05
    assert ((holm["p_unadjusted"] < 0.05) == holm["significant_unadjusted"]).all()
    assert (holm["p_adjusted"] >= holm["p_unadjusted"]).all() and (bh["p_adjusted"] <= holm["p_adjusted"] + 1e-15).all()


def test_a_comparison_honours_the_builds_interval_method(demo):
    """A build made with ci_method=studentized (its dim_build says so) compares by studentized intervals."""
    with closing(open_marts(demo)) as con:
        percentile = slice_metrics(["delta_htr"], ["condition"], con=con, compare=f"model={A},{B}")
        built = con.sql("select * from dim_build").df()
        for method in ("studentized", "bca"):
            # dim_build as a build made with that method writes it, in this connection only
            con.register("built", built.assign(ci_method=method))
            con.execute("create or replace temp view dim_build as select * from built")
            other = slice_metrics(["delta_htr"], ["condition"], con=con, compare=f"model={A},{B}")
            assert (other["ci_method"] == method).all()
            assert other["difference"].tolist() == percentile["difference"].tolist()
            assert other["se_clustered"].tolist() == percentile["se_clustered"].tolist()
            assert not np.allclose(other["ci_low"], percentile["ci_low"])
            assert ((other["p_unadjusted"] < 0.05) == other["significant_unadjusted"]).all()
            trusted = con.sql(f"select min_cases from dim_interval_trust where ci_method = '{method}' and kind = 'difference'").fetchall()
            assert (other["few_cases"] == (other["n_cases"] < trusted[0][0])).all()


@pytest.mark.parametrize("compare, by, message", [
    (f"model={A},nonexistent", "condition", "unknown model 'nonexistent'. Fix: compare two of the 4 there are: "),
    (f"model={A},{B},sim:noise@0.2", "condition", "names 3 values"),
    (f"modle={A},{B}", "condition", "--compare: unknown dimension 'modle'"),
    (f"model={A},{B}", "model,condition", "--compare: model is compared and also named in --by"),
])
def test_a_misread_comparison_ends_in_one_line(demo, compare, by, message):
    done = hindsight(demo, "metrics", "--metric", "acc", "--by", by, "--compare", compare, expect=2)
    assert message in done.stderr and done.stderr.count("\n") == 1, done.stderr
