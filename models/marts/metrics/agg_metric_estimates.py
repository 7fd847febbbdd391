"""One row per metric cell at two groupings: `format` (cohort x model x
condition x prompt_variant x metric x visibility x format x options_type)
and `overall` (without format and options_type). Point estimate,
case-clustered bootstrap percentile CI, Miller's clustered standard error and
minimum detectable effect, question, case and valid counts.

Per-case sums come from SQL (agg_metric_case_sums); all replicates of all
cells of a cohort are one matrix product of the bootstrap weights
(ingest/bootstrap.py: the draws of fct_bootstrap_samples) by those sums.
Overall cells are sums of format cells, so only the finest grain is read.
"""
import numpy as np
import pandas as pd

from ingest import bootstrap

CELL = ["model", "condition", "prompt_variant", "metric", "visibility"]
FINE = CELL + ["format", "options_type"]
STATS = ["estimate", "ci_low", "ci_high", "se_clustered", "mde_80"]
COUNTS = ["n_questions", "n_cases", "n_valid", "n_finite_replicates"]


def cohort_estimates(sums, cohort: str, n_cases: int, replicates: int, seed: int) -> pd.DataFrame:
    part = sums.filter("cohort = '" + cohort.replace("'", "''") + "'")
    labels = part.aggregate("cell_index, " + ", ".join(f"any_value({c}) as {c}" for c in FINE)).order("cell_index").df()
    arrays = part.project("cell_index, case_index, value_sum, n_questions, n_valid").fetchnumpy()
    cells, cases = arrays["cell_index"].astype(np.int64), arrays["case_index"].astype(np.int64)
    n_fine = len(labels)

    value_sum = np.zeros((n_cases, n_fine))
    n_questions = np.zeros((n_cases, n_fine))
    value_sum[cases, cells] = arrays["value_sum"]
    n_questions[cases, cells] = arrays["n_questions"]
    fine_valid = np.bincount(cells, weights=arrays["n_valid"].astype(np.float64), minlength=n_fine)

    # overall cells: each fine cell belongs to exactly one
    overall_id, overall_keys = pd.MultiIndex.from_frame(labels[CELL]).factorize()
    membership = np.zeros((n_fine, len(overall_keys)))
    membership[np.arange(n_fine), overall_id] = 1.0
    all_sums = np.hstack([value_sum, value_sum @ membership])
    all_counts = np.hstack([n_questions, n_questions @ membership])
    del value_sum, n_questions

    stats = bootstrap.cell_statistics(all_sums, all_counts, bootstrap.weights(seed, cohort, n_cases, replicates))
    overall = pd.DataFrame(list(overall_keys), columns=CELL)
    frame = pd.concat([labels[FINE].assign(grouping="format"),
                       overall.assign(grouping="overall", format=None, options_type=None)], ignore_index=True)
    frame["cohort"] = cohort
    for name in STATS:
        frame[name] = stats[name]
    frame["n_questions"] = all_counts.sum(axis=0)
    frame["n_cases"] = (all_counts > 0).sum(axis=0)
    frame["n_valid"] = np.concatenate([fine_valid, fine_valid @ membership])
    frame["n_finite_replicates"] = stats["n_finite_replicates"]
    return frame


def model(dbt, session):
    dbt.config(materialized="table")
    replicates = int(dbt.config.get("bootstrap_replicates"))
    seed = int(dbt.config.get("bootstrap_seed"))
    sums = dbt.ref("agg_metric_case_sums")
    cohorts = dbt.ref("int_bootstrap_cases").aggregate("cohort, max(n_cases) as n_cases").order("cohort").fetchall()
    present = {row[0] for row in sums.aggregate("cohort").fetchall()}
    parts = [cohort_estimates(sums, cohort, int(n), replicates, seed) for cohort, n in cohorts if cohort in present]
    columns = ["grouping", "cohort", *FINE, *STATS, *COUNTS]
    if parts:
        frame = pd.concat(parts, ignore_index=True)[columns]
    else:
        frame = pd.DataFrame({c: pd.Series(dtype="float64" if c in STATS or c in COUNTS else "object") for c in columns})
    frame[COUNTS] = frame[COUNTS].astype("int64")
    frame["options_type"] = frame["options_type"].replace("", None)
    frame["bootstrap_replicates"] = replicates
    frame["bootstrap_seed"] = seed
    return frame
