"""The estimator behind the dbt Python models int_metric_estimates and
int_metric_estimates_by_eval_target: one row per metric cell with its point
estimate, case-clustered bootstrap percentile CI, Miller's clustered standard
error, minimum detectable effect, and question, case and valid counts.

It reads the per-case sums of int_metric_case_sums (their one definition:
a cell key, the case's index and numbers), summed to a leaf grain (CELL plus
the slice columns) through the labels of int_metric_cells: only numbers cross
into Python, where np.bincount sums them per cohort. All replicates of all leaf cells of a cohort are one matrix
product of the bootstrap weights (ingest/stats/bootstrap.py: the draws of
fct_bootstrap_samples) by the per-case sums; coarser groupings (`rollups`)
are sums of leaf cells, so they need no second product.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ingest.stats import bootstrap

CELL = ["model", "condition", "prompt_variant", "metric", "visibility"]
STATS = ["estimate", "ci_low", "ci_high", "se_clustered", "mde_80"]
COUNTS = ["n_questions", "n_cases", "n_valid", "n_finite_replicates"]


def changed_answer_cells(sums: str, this: str, replicates: int, seed: int, method: str) -> str:
    """The answer cells (int_metric_case_sums.answer_cell_key) whose case sums changed since the
    estimates `this` were computed: all of them when those used other bootstrap settings."""
    return f"""
        select distinct answer_cell_key from {sums}
        where scored_through > (select coalesce(max(scored_through), '1970-01-01') from {this})
            or exists (select 1 from {this} where bootstrap_replicates <> {replicates} or bootstrap_seed <> {seed}
                       or ci_method <> '{method}')"""


def per_case_sums(session, sums: str, cells: str, slices: list[str], only: str | None = None):
    """Leaf cells (labels and valid counts), numbered by cohort then hash; the case sums to read; and
    the newest score summed. The case sums are numbers only (cell key, case index): the labels of the
    few cells map each cell key to its leaf (temp table bootstrap_cell_leaves), and cohort_matrices
    sums them to the leaves.
    `only` (a query of answer cell keys) restricts both to those answer cells: an incremental build
    estimates only what changed."""
    if only is not None:
        session.execute(f"create or replace temp table bootstrap_sums as select * from {sums} "
                        f"where answer_cell_key in ({only})")
        session.execute(f"create or replace temp table bootstrap_labels as select * from {cells} "
                        "where cell_key in (select cell_key from bootstrap_sums)")
        sums, cells = "bootstrap_sums", "bootstrap_labels"
    keys = ["cohort", *CELL, *slices]
    leaf_hash = f"hash({', '.join(keys)})"
    labelled_leaf_hash = f"hash({', '.join(f'cells.{k}' for k in keys)})"
    session.execute(f"""
        create or replace temp table bootstrap_cells as
        select *, cast(row_number() over (order by cohort, leaf_hash) - 1 as bigint) as cell_id
        from (
            select {leaf_hash} as leaf_hash, {', '.join(f'any_value({k}) as {k}' for k in keys)}
            from {cells} group by 1
        )""")
    session.execute(f"""
        create or replace temp table bootstrap_cell_leaves as
        select cells.cell_key, leaves.cell_id
        from {cells} as cells
        inner join bootstrap_cells as leaves on leaves.leaf_hash = {labelled_leaf_hash}""")
    # valid counts and the newest score per leaf (a few thousand groups), in the same pass
    per_leaf = session.sql(f"""
        select leaves.cell_id, sum(sums.n_valid) as n_valid, max(sums.scored_through) as scored_through
        from {sums} as sums
        inner join bootstrap_cell_leaves as leaves on leaves.cell_key = sums.cell_key
        group by all""").df()
    labels = session.sql("select * exclude (leaf_hash) from bootstrap_cells order by cell_id").df()
    labels["n_valid"] = np.bincount(per_leaf["cell_id"].to_numpy(dtype=np.intp),
                                    weights=per_leaf["n_valid"].to_numpy(dtype=np.float64), minlength=len(labels))
    scored_through = per_leaf["scored_through"].max() if len(per_leaf) else None
    return labels, sums, scored_through


def cohort_matrices(session, sums, cohort, n_cases, labels, slices):
    """Per-case sums and counts (n_cases x leaf cells of the cohort), with the cells' labels and valid
    counts. The rows of the finest cells are summed to the leaves by np.bincount on (case, leaf): at
    100x the paper's cases 26 M rows reach 20 M sums, which a DuckDB group by took twice as long to do."""
    ids = labels.index[labels["cohort"] == cohort]
    low, high = int(ids.min()), int(ids.max()) + 1          # a cohort's cells are numbered contiguously
    width = high - low
    rows = session.sql(f"""
        select cast(sums.case_index as bigint) * {width} + (leaves.cell_id - {low}) as position,
            sums.value_sum, sums.n_questions
        from {sums} as sums
        inner join bootstrap_cell_leaves as leaves on leaves.cell_key = sums.cell_key
        where leaves.cell_id >= {low} and leaves.cell_id < {high}""").fetchnumpy()
    value_sum = np.bincount(rows["position"], weights=rows["value_sum"], minlength=n_cases * width)
    n_questions = np.bincount(rows["position"], weights=rows["n_questions"], minlength=n_cases * width)
    del rows
    mine = labels.iloc[low:high].reset_index(drop=True)
    return (mine[[*CELL, *slices]], value_sum.reshape(n_cases, width), n_questions.reshape(n_cases, width),
            mine["n_valid"].to_numpy(dtype=np.float64))


def cohort_estimates(session, sums, cohort, n_cases, all_labels, replicates, seed, leaf, slices, rollups, method, cache=None):
    """Statistics of the leaf cells (grouping `leaf`) and of every rollup grouping (name: key columns)."""
    labels, value_sum, n_questions, n_valid = cohort_matrices(session, sums, cohort, n_cases, all_labels, slices)
    frames, memberships = [labels[CELL + slices].assign(grouping=leaf)], []
    for name, keys in rollups.items():
        group_id, group_keys = pd.MultiIndex.from_frame(labels[keys]).factorize()
        membership = np.zeros((len(labels), len(group_keys)))
        membership[np.arange(len(labels)), group_id] = 1.0
        memberships.append(membership)
        frames.append(pd.DataFrame(list(group_keys), columns=keys).assign(grouping=name))
    groups = np.hstack(memberships) if memberships else None
    stats = bootstrap.cell_statistics(value_sum, n_questions, bootstrap.shared_weights(seed, cohort, n_cases, replicates, cache),
                                      groups=groups, method=method)
    frame = pd.concat(frames, ignore_index=True).reindex(columns=["grouping", *CELL, *slices]).astype(object)
    frame = frame.where(frame.notna(), None)          # the slice columns a rollup leaves out are NULL
    frame["cohort"] = cohort
    for name in STATS:
        frame[name] = stats[name]
    frame["n_questions"] = stats["n_questions"]
    frame["n_cases"] = stats["n_cases"]
    frame["n_valid"] = n_valid if groups is None else np.concatenate([n_valid, n_valid @ groups])
    frame["n_finite_replicates"] = stats["n_finite_replicates"]
    return frame


def estimates(session, sums: str, cells: str, cases: str, replicates: int, seed: int,
              leaf: str, slices: list[str], rollups: dict[str, list[str]], method: str = "percentile",
              this: str | None = None) -> pd.DataFrame:
    """The body of a metric-estimates dbt Python model. `sums` is int_metric_case_sums, `cells`
    int_metric_cells and `cases` int_bootstrap_cases as SQL relations: the models take them with
    dbt.ref, which dbt only sees in the model's own file, as it does dbt.config.get. With `this` (the
    stored estimates of an incremental build) only the answer cells whose case sums changed since
    are estimated; their rows replace the stored ones (unique key: cohort and answer cell)."""
    only = changed_answer_cells(sums, this, replicates, seed, method) if this else None
    labels, sums, scored_through = per_case_sums(session, sums, cells, slices, only)
    sizes = dict(session.sql(f"select cohort, max(n_cases) from {cases} group by cohort").fetchall())
    # the draws are kept beside the warehouse file: the next build of the same cohorts reads them back
    cache = bootstrap.weights_cache(session.execute(
        "select path from duckdb_databases() where database_name = current_database()").fetchall()[0][0])
    frames = [cohort_estimates(session, sums, cohort, int(sizes[cohort]), labels, replicates, seed, leaf, slices, rollups,
                               method, cache)
              for cohort in sorted(set(labels["cohort"]))]

    columns_out = ["grouping", "cohort", *CELL, *slices, *STATS, *COUNTS]
    if frames:
        out = pd.concat(frames, ignore_index=True)[columns_out]
    else:
        out = pd.DataFrame({c: pd.Series(dtype="float64" if c in STATS or c in COUNTS else "object") for c in columns_out})
    out[COUNTS] = out[COUNTS].astype("int64")
    if "options_type" in out:
        out["options_type"] = out["options_type"].replace("", None)
    # typed labels: an empty or all-NULL column would otherwise create the (incremental) table with
    # DuckDB's NULL type, into which no later label could be inserted
    labels_out = ["grouping", "cohort", *CELL, *slices]
    out[labels_out] = out[labels_out].astype("string")
    out["bootstrap_replicates"] = replicates
    out["bootstrap_seed"] = seed
    out["ci_method"] = method
    out["scored_through"] = pd.Series([scored_through] * len(out), dtype="datetime64[us]")
    return out


def block_estimates(cohort: str, n_cases: int, cell_id: np.ndarray, case_index: np.ndarray, value_sum: np.ndarray,
                    n_questions: np.ndarray, n_valid: np.ndarray, replicates: int, seed: int, method: str,
                    replicate_block: int) -> dict:
    """The statistics of one block of cells of a cohort, from their per-case sums (one row per cell
    and case that has questions in it): what a Spark task computes (ingest/spark/functions.py), with
    the estimator DuckDB's models use (bootstrap.cell_statistics). The multiplicities are drawn
    again here, REPLICATE_BLOCK replicates at a time, so a task holds (cases x its cells) sums and
    (replicate block x cases) draws, never the cohort's every cell or replicate at once; the block
    sizes change no number (each replicate's sums are its own row of a product of exact integers)."""
    cells, column = np.unique(cell_id, return_inverse=True)
    position = case_index.astype(np.int64) * len(cells) + column
    shape = (n_cases, len(cells))
    sums = np.bincount(position, weights=value_sum, minlength=n_cases * len(cells)).reshape(shape)
    counts = np.bincount(position, weights=n_questions, minlength=n_cases * len(cells)).reshape(shape)
    blocks = bootstrap.weight_blocks(seed, cohort, n_cases, replicates, max(1, replicate_block))
    stats = bootstrap.cell_statistics(sums, counts, blocks, method=method)
    return {"cell_id": cells, **{name: stats[name] for name in ["estimate", "ci_low", "ci_high", "se_clustered"]},
            "n_questions": stats["n_questions"], "n_cases": stats["n_cases"],
            "n_valid": np.bincount(column, weights=n_valid, minlength=len(cells)),
            "n_finite_replicates": stats["n_finite_replicates"]}
