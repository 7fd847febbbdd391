"""One row per metric cell, at two groupings: `format` (cohort x model x
condition x prompt_variant x metric x visibility x format x options_type)
and `overall` (the same without format and options_type). Point estimate,
case-clustered bootstrap percentile CI, Miller's clustered standard error and,
for paired metrics, the minimum detectable effect at 80% power.

Per-case sums come from SQL; the replicate sums are one matrix product of
the bootstrap weights (ingest/bootstrap.py, same draws as
fct_bootstrap_samples) by the per-case sums, per cohort. Overall cells are
sums of format cells, so only the finest grain is resampled.
"""
import numpy as np
import pandas as pd

from ingest import bootstrap

CELL = ["model", "condition", "prompt_variant", "metric", "visibility"]
FINE = CELL + ["format", "options_type"]


def cohort_rows(cohort, sums, cases, replicates, seed):
    case_position = dict(zip(cases["case_id"], cases["case_index"]))
    n_cases = len(cases)
    fine = sums[FINE].drop_duplicates().reset_index(drop=True)
    fine_index = {tuple(row): i for i, row in enumerate(fine.itertuples(index=False))}
    overall = fine[CELL].drop_duplicates().reset_index(drop=True)
    overall_index = {tuple(row): i for i, row in enumerate(overall.itertuples(index=False))}
    # fine -> overall cell membership, so overall sums are fine sums added up
    to_overall = np.zeros((len(fine), len(overall)))
    for i, row in enumerate(fine[CELL].itertuples(index=False)):
        to_overall[i, overall_index[tuple(row)]] = 1.0

    rows = sums[FINE].itertuples(index=False)
    columns = np.fromiter((fine_index[tuple(r)] for r in rows), dtype=np.int64, count=len(sums))
    case_rows = sums["case_id"].map(case_position).to_numpy(dtype=np.int64)
    matrices = {}
    for name in ("value_sum", "n_questions", "n_valid"):
        matrix = np.zeros((n_cases, len(fine)))
        matrix[case_rows, columns] = sums[name].to_numpy(dtype=np.float64)
        matrices[name] = np.hstack([matrix, matrix @ to_overall])

    weights = bootstrap.weights(seed, cohort, n_cases, replicates)
    stats = bootstrap.cell_statistics(matrices["value_sum"], matrices["n_questions"], weights)
    labels = pd.concat([fine.assign(grouping="format"),
                        overall.assign(grouping="overall", format=None, options_type=None)], ignore_index=True)
    out = labels.assign(
        cohort=cohort,
        n_questions=matrices["n_questions"].sum(axis=0).astype(np.int64),
        n_cases=(matrices["n_questions"] > 0).sum(axis=0).astype(np.int64),
        n_valid=matrices["n_valid"].sum(axis=0).astype(np.int64),
        **stats,
    )
    return out


def model(dbt, session):
    dbt.config(materialized="table")
    replicates = int(dbt.config.get("bootstrap_replicates"))
    seed = int(dbt.config.get("bootstrap_seed"))
    sums = dbt.ref("int_metric_case_sums").df()
    cases = dbt.ref("int_bootstrap_cases").df()
    parts = [
        cohort_rows(cohort, group, cases[cases["cohort"] == cohort].sort_values("case_index"), replicates, seed)
        for cohort, group in sums.groupby("cohort", sort=True)
    ]
    columns = ["grouping", "cohort", *FINE, "estimate", "ci_low", "ci_high", "n_finite_replicates",
               "se_clustered", "mde_80", "n_questions", "n_cases", "n_valid"]
    if not parts:
        frame = pd.DataFrame({c: pd.Series(dtype="float64" if c in ("estimate", "ci_low", "ci_high", "se_clustered", "mde_80")
                                           else "int64" if c.startswith("n_") else "object") for c in columns})
    else:
        frame = pd.concat(parts, ignore_index=True)[columns]
    frame["options_type"] = frame["options_type"].replace("", None)
    frame["bootstrap_replicates"] = replicates
    frame["bootstrap_seed"] = seed
    return frame
