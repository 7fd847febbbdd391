"""The estimator behind the dbt Python models agg_metric_estimates and
agg_metric_estimates_by_eval_target: one row per metric cell with its point
estimate, case-clustered bootstrap percentile CI, Miller's clustered standard
error, minimum detectable effect, and question, case and valid counts.

Per-case sums are aggregated in DuckDB from fct_answers and fct_answer_pairs
at a leaf grain (CELL plus the slice columns), keyed by run-local 64-bit
hashes of the cell and the case so that only numbers cross into Python (the
same sums as the agg_*_case_sums views, which a singular test and the pytest
suite recompute independently). All replicates of all leaf cells of a cohort
are one matrix product of the bootstrap weights (ingest/bootstrap.py: the
draws of fct_bootstrap_samples) by the per-case sums; coarser groupings
(`rollups`) are sums of leaf cells, so they need no second product.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ingest import bootstrap

CELL = ["model", "condition", "prompt_variant", "metric", "visibility"]
STATS = ["estimate", "ci_low", "ci_high", "se_clustered", "mde_80"]
COUNTS = ["n_questions", "n_cases", "n_valid", "n_finite_replicates"]
SLICE_SQL = {"format": "format", "options_type": "coalesce(options_type, '')", "eval_target": "eval_target"}
SOURCES = [  # (fact relation, visibility expression, validity condition, metrics, row filter)
    ("fct_answers", "visibility", "parse_status <> 'invalid'", ["acc", "htr"], "is_latest_in_cell"),
    ("fct_answer_pairs", "'paired'", "both_valid", ["delta_acc", "delta_htr", "air", "hbr"], "true"),
]


def per_case_sums(session, facts, cases, visibility, validity, metrics, where, slices):
    """Leaf cells (labels and valid counts), numbered by cohort then hash, and per (cell, case) sums.
    The numbering joins are on integers against small tables, so only numbers reach Python."""
    keys = ", ".join(SLICE_SQL[s] for s in slices)
    cell_hash = f"hash(cohort, model, condition, prompt_variant, {visibility}, {keys})"
    labels_sql = ", ".join(f"any_value({SLICE_SQL[s]}) as {s}" for s in slices)
    sums = ", ".join(f"coalesce(sums.{m}_sum, 0) as {m}_sum, cast(sums.{m}_n as integer) as {m}_n" for m in metrics)
    aggregates = ", ".join(f"sum({m}) as {m}_sum, count({m}) as {m}_n" for m in metrics)
    valid = ", ".join(f"count({m}) filter (where {validity}) as {m}_valid, count({m}) as {m}_total" for m in metrics)
    session.execute(f"""
        create or replace temp table bootstrap_cells as
        select *, cast(row_number() over (order by cohort, cell_hash) - 1 as bigint) as cell_id
        from (
            select {cell_hash} as cell_hash, any_value(cohort) as cohort, any_value(model) as model,
                any_value(condition) as condition, any_value(prompt_variant) as prompt_variant,
                any_value({visibility}) as visibility, {labels_sql}, {valid}
            from {facts} where {where} group by 1
        )""")
    labels = session.sql("select * from bootstrap_cells order by cell_id").df()
    arrays = session.sql(f"""
        with sums as (
            select {cell_hash} as cell_hash, hash(cohort, case_id) as case_hash, {aggregates}
            from {facts} where {where} group by all
        )
        select cast(cells.cell_id as integer) as cell_id, cast(cases.case_index as integer) as case_index, {sums}
        from sums
        inner join bootstrap_cells as cells on cells.cell_hash = sums.cell_hash
        inner join (select hash(cohort, case_id) as case_hash, case_index from {cases}) as cases
            on cases.case_hash = sums.case_hash""").fetchnumpy()
    return labels, arrays


def cohort_matrices(cohort, n_cases, fact_sums, slices):
    """Per-case sums and counts (n_cases x leaf cells with questions) of one cohort, with labels."""
    blocks = []   # (arrays, rows, cell ids of the rows, {metric: matrix column of each cell})
    labels, valid, width = [], [], 0
    for (cell_labels, arrays), metrics in fact_sums:
        ids = cell_labels.index[cell_labels["cohort"] == cohort]
        if len(ids) == 0:
            continue
        low, high = ids.min(), ids.max() + 1          # a cohort's cells are numbered contiguously
        rows = (arrays["cell_id"] >= low) & (arrays["cell_id"] < high)
        mine = cell_labels.iloc[low:high]
        columns = {}
        for metric in metrics:
            present = (mine[f"{metric}_total"] > 0).to_numpy()
            # cells without a value of this metric write to a spare last column, dropped below
            columns[metric] = np.where(present, np.cumsum(present) - 1 + width, -1)
            labels.append(mine[present][["model", "condition", "prompt_variant", "visibility", *slices]]
                          .assign(metric=metric))
            valid.append(mine[present][f"{metric}_valid"].to_numpy(dtype=np.float64))
            width += int(present.sum())
        blocks.append((arrays, rows, arrays["cell_id"][rows] - low, arrays["case_index"][rows], columns))
    value_sum = np.zeros((n_cases, width + 1))
    n_questions = np.zeros((n_cases, width + 1))
    for arrays, rows, cell, case, columns in blocks:
        for metric, column_of_cell in columns.items():
            column = column_of_cell[cell]
            value_sum[case, column] = arrays[f"{metric}_sum"][rows]
            n_questions[case, column] = arrays[f"{metric}_n"][rows]
    return pd.concat(labels, ignore_index=True), value_sum[:, :width], n_questions[:, :width], np.concatenate(valid)


def cohort_estimates(cohort, n_cases, fact_sums, replicates, seed, leaf, slices, rollups):
    """Statistics of the leaf cells (grouping `leaf`) and of every rollup grouping (name: key columns)."""
    labels, value_sum, n_questions, n_valid = cohort_matrices(cohort, n_cases, fact_sums, slices)
    frames, memberships = [labels[CELL + slices].assign(grouping=leaf)], []
    for name, keys in rollups.items():
        group_id, group_keys = pd.MultiIndex.from_frame(labels[keys]).factorize()
        membership = np.zeros((len(labels), len(group_keys)))
        membership[np.arange(len(labels)), group_id] = 1.0
        memberships.append(membership)
        frames.append(pd.DataFrame(list(group_keys), columns=keys).assign(grouping=name))
    groups = np.hstack(memberships) if memberships else None
    stats = bootstrap.cell_statistics(value_sum, n_questions, bootstrap.weights(seed, cohort, n_cases, replicates),
                                      groups=groups)
    frame = pd.concat(frames, ignore_index=True).reindex(columns=["grouping", *CELL, *slices]).astype(object)
    frame = frame.where(frame.notna(), None)          # the slice columns a rollup leaves out are NULL
    frame["cohort"] = cohort
    for name in STATS:
        frame[name] = stats[name]
    per_case = n_questions if groups is None else np.hstack([n_questions, n_questions @ groups])
    frame["n_questions"] = per_case.sum(axis=0)
    frame["n_cases"] = (per_case > 0).sum(axis=0)
    frame["n_valid"] = n_valid if groups is None else np.concatenate([n_valid, n_valid @ groups])
    frame["n_finite_replicates"] = stats["n_finite_replicates"]
    return frame


def estimates(session, facts: dict[str, str], cases: str, replicates: int, seed: int,
              leaf: str, slices: list[str], rollups: dict[str, list[str]]) -> pd.DataFrame:
    """The body of a metric-estimates dbt Python model. `facts` maps fct_answers and fct_answer_pairs,
    and `cases` is int_bootstrap_cases, to SQL relations: the models take them with dbt.ref, which
    dbt only sees in the model's own file, as it does dbt.config.get."""
    fact_sums = [(per_case_sums(session, facts[name], cases, visibility, validity, metrics, where, slices), metrics)
                 for name, visibility, validity, metrics, where in SOURCES]
    sizes = dict(session.sql(f"select cohort, max(n_cases) from {cases} group by cohort").fetchall())
    answered = sorted(set(fact_sums[0][0][0]["cohort"]) | set(fact_sums[1][0][0]["cohort"]))
    frames = [cohort_estimates(cohort, int(sizes[cohort]), fact_sums, replicates, seed, leaf, slices, rollups)
              for cohort in answered]

    columns_out = ["grouping", "cohort", *CELL, *slices, *STATS, *COUNTS]
    if frames:
        out = pd.concat(frames, ignore_index=True)[columns_out]
    else:
        out = pd.DataFrame({c: pd.Series(dtype="float64" if c in STATS or c in COUNTS else "object") for c in columns_out})
    out[COUNTS] = out[COUNTS].astype("int64")
    if "options_type" in out:
        out["options_type"] = out["options_type"].replace("", None)
    out["bootstrap_replicates"] = replicates
    out["bootstrap_seed"] = seed
    return out
