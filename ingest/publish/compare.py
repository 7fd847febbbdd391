"""Two models, prompt variants, conditions or visibilities compared on the questions both answered
(`hindsight metrics --compare model=A,B`, slice_metrics(compare=...), the explorer's Compare).

For each metric and cell of the other dimensions, the question rows are matched across the two arms
(the same question under the same values of every other key of fct_metric_parts' grain: question,
model, condition, prompt variant, visibility, but the one compared) and kept where both have a
value. The difference is estimate_a - estimate_b over those rows, each arm's estimate the marts'
ratio sum_c S_c / sum_c N_c; its SE, interval (by the build's ci_method) and p are those of
ingest/stats/differences.py, from the build's replicates (the same counter-based draws of each cohort
as fct_bootstrap_samples, case c weighted alike in both arms).

What a reviewer needs beside each difference:
- what the matching left out: per arm, the rows and the cases it had in the cell that the other arm
  has no row for (`rows_lost_a`, `cases_lost_a`, ...); estimate_a is over the matched rows, so it can
  differ from A's own estimate. A cell only one arm has (a model without 'warning' rows, under
  prompt_variant=standard,warning) is a row with no difference and a reason that names it.
- too few cases (`few_cases`, `caution`: ingest/stats/trust.py);
- the significance of each cell on its own (`significant_unadjusted`, `p_unadjusted`) and adjusted
  across the cells of the metric's comparison (`p_adjusted`, `significant_adjusted` by Holm, or
  Benjamini-Hochberg: ingest/stats/multiplicity.py), the family named in `family`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ingest.errors import InputError
from ingest.publish.case_layout import CaseLayout
from ingest.publish.semantic import Dimension, SemanticLayer
from ingest.publish.where import Condition
from ingest.stats import differences, multiplicity, trust

# what can be compared: the dimension, and its column in fct_metric_parts' grain
COMPARABLE = {"model": "model", "condition": "condition", "answer__prompt_variant": "prompt_variant",
              "answer__visibility": "visibility"}
GRAIN = ("question_id", "model", "condition", "prompt_variant", "visibility")
COLUMNS = ["a", "b", "estimate_a", "estimate_b", "difference", "ci_low", "ci_high", "ci_method",
           "significant_unadjusted", "p_unadjusted", "significant_adjusted", "p_adjusted", "adjustment", "family",
           "few_cases", "caution", "se_clustered", "n_questions", "n_cases", "rows_lost_a", "cases_lost_a",
           "rows_lost_b", "cases_lost_b", "n_finite_replicates", "reason"]
FIX = "write --compare DIMENSION=A,B with a model, condition, prompt_variant or visibility, e.g. --compare model=sim:a,sim:b"


def parse_compare(text: str, layer: SemanticLayer, by: list[Dimension] = ()) -> tuple[Dimension, str, str]:
    """(dimension, A, B) from DIMENSION=A,B; every misreading is one line that says what is wrong."""
    name, sep, values = text.partition("=")
    named = [v.strip() for v in values.split(",")] if sep else []
    if not sep or len(named) < 2 or not all(named):
        raise InputError("--compare", f"{text!r} names no two values", FIX)
    if len(named) > 2:
        raise InputError("--compare", f"{text!r} names {len(named)} values ({', '.join(named)}); a comparison is of two",
                         f"compare two at a time, e.g. --compare {name.strip()}={named[0]},{named[1]}")
    try:
        dimension = layer.dimension(name.strip())
    except InputError as error:          # the layer says --by; here it is --compare's dimension
        raise InputError("--compare", str(error).split(": ", 1)[1].split(". Fix: ")[0], error.fix) from None
    if dimension.name not in COMPARABLE:
        raise InputError("--compare", f"{dimension.name} cannot be compared (its arms share no question row)", FIX)
    if dimension in by:
        raise InputError("--compare", f"{dimension.name} is compared and also named in --by",
                         f"leave {dimension.short} out of --by: each cell is already {named[0]} against {named[1]}")
    a, b = named
    if a == b:
        raise InputError("--compare", f"{a!r} against itself", "name two different values")
    return dimension, a, b


def check_values(con, dimension: Dimension, a: str, b: str, rows_sql: str) -> None:
    """A and B are values the dimension has in the marts, or one line lists the ones it has."""
    values = [v for (v,) in con.execute(f'select distinct cast("{dimension.name}" as varchar) from ({rows_sql}) '
                                        f'where "{dimension.name}" is not null order by 1').fetchall()]
    unknown = [v for v in (a, b) if v not in values]
    if unknown:
        shown = ", ".join(values[:30]) + (f" and {len(values) - 30} more" if len(values) > 30 else "")
        raise InputError("--compare", f"unknown {dimension.short} {', '.join(map(repr, unknown))}",
                         f"compare two of the {len(values)} there are: {shown}")


def compare_cells(con, layer: SemanticLayer, metric, dimensions: list[Dimension], rows_sql: str, condition: Condition | None,
                  compared: tuple[Dimension, str, str], numbering: pd.DataFrame, settings: tuple[int, int, str],
                  trusted: pd.DataFrame, adjustment: str = "holm") -> pd.DataFrame:
    """METRIC's differences, one row per cell of DIMENSIONS (the compared one left out)."""
    dimension, a, b = compared
    replicates, seed, method = settings
    names = [d.name for d in dimensions]
    keys = ", ".join(f'"{n}"' for n in names)
    match = ", ".join(c for c in GRAIN if c != COMPARABLE[dimension.name])
    visibilities = ", ".join(f"'{v}'" for v in metric.visibilities)
    kept = f"visibility in ({visibilities}) and {metric.denominator} > 0{f' and ({condition.sql})' if condition else ''}"
    # per cell and case: each arm's sums over the rows both arms have, and its rows in all and matched
    frame = con.execute(f"""
        with slice_rows as ({rows_sql}),
        arms as (
            select {keys}, hash(cohort, case_id) as case_key, hash({match}) as match_key,
                cast("{dimension.name}" as varchar) = ? as is_a, {metric.numerator} as s, {metric.denominator} as n
            from slice_rows
            where {kept} and cast("{dimension.name}" as varchar) in (?, ?)),
        paired as (
            -- a question row's match key is unique within an arm (fct_metric_parts' grain): two rows, both arms
            select *, count(*) over (partition by match_key) = 2 as matched from arms)
        select {keys}, case_key,
            coalesce(sum(s) filter (where matched and is_a), 0) as sa, coalesce(sum(n) filter (where matched and is_a), 0) as na,
            coalesce(sum(s) filter (where matched and not is_a), 0) as sb, coalesce(sum(n) filter (where matched and not is_a), 0) as nb,
            count(*) filter (where is_a) as rows_a, count(*) filter (where is_a and matched) as matched_a,
            count(*) filter (where not is_a) as rows_b, count(*) filter (where not is_a and matched) as matched_b
        from paired
        group by all""", [a, a, b]).df()
    if frame.empty:
        return pd.DataFrame(columns=["metric", *names, *COLUMNS])
    cells = frame[names].drop_duplicates().sort_values(names, na_position="last").reset_index(drop=True)
    cells["cell"] = np.arange(len(cells))
    frame = frame.merge(cells, on=names, how="left").merge(numbering[["case_key", "cohort_id", "case_index"]], on="case_key")
    layout = CaseLayout(numbering, frame["cohort_id"].to_numpy(), frame["case_index"].to_numpy(), frame["cell"].to_numpy(),
                        len(cells))
    sa, na, sb, nb = (layout.summed(frame[c].to_numpy()) for c in ("sa", "na", "sb", "nb"))
    stats = differences.difference_statistics(sa, na, sb, nb, layout.strata(), layout.replicate_blocks(seed, replicates), method)
    lost = _lost(frame, len(cells))
    n_questions, n_cases = na.sum(axis=0).astype(np.int64), (na > 0).sum(axis=0).astype(np.int64)
    one_arm = n_questions == 0
    no_interval = one_arm | (n_cases < trust.MIN_CASES)
    out = cells.drop(columns="cell")
    out.insert(0, "metric", metric.name)
    out["a"], out["b"] = a, b
    for column, values in (("estimate_a", stats["estimate_a"]), ("estimate_b", stats["estimate_b"]),
                           ("difference", stats["difference"])):
        out[column] = np.where(one_arm, np.nan, values)
    out["ci_low"] = np.where(no_interval, np.nan, stats["ci_low"])
    out["ci_high"] = np.where(no_interval, np.nan, stats["ci_high"])
    out["ci_method"] = method
    out["significant_unadjusted"] = (out["ci_low"] > 0) | (out["ci_high"] < 0)
    out["p_unadjusted"] = np.where(no_interval, np.nan, stats["p_value"])
    out["p_adjusted"] = multiplicity.adjusted(out["p_unadjusted"].to_numpy(), adjustment)
    # adjusted only ever removes a finding: a p just under the level whose interval (interpolated between
    # replicates) still touches 0 is not made significant by it
    out["significant_adjusted"] = out["significant_unadjusted"] & (out["p_adjusted"] < multiplicity.LEVEL)
    out["adjustment"] = adjustment
    tested = int(np.isfinite(out["p_unadjusted"]).sum())
    out["family"] = (f"{metric.name}, {dimension.short} {a} - {b}: {tested} cell{'s' if tested != 1 else ''}"
                     + (f" by {', '.join(d.short for d in dimensions)}" if dimensions else ""))
    out["few_cases"], out["caution"] = trust.flags(n_cases, method, "difference", trusted)
    out["se_clustered"] = np.where(no_interval, np.nan, stats["se"])
    out["n_questions"], out["n_cases"] = n_questions, n_cases
    for column, values in lost.items():
        out[column] = values
    out["n_finite_replicates"] = np.where(one_arm, 0, stats["n_finite_replicates"]).astype(np.int64)
    out["reason"] = _reasons(out, a, b, dimension, one_arm, n_cases)
    return out[["metric", *names, *COLUMNS]]


def _lost(frame: pd.DataFrame, width: int) -> dict[str, np.ndarray]:
    """Per cell and arm, the rows with a value that the other arm has no row for, and the cases all of
    whose rows are such."""
    cell = frame["cell"].to_numpy()
    out = {}
    for arm in ("a", "b"):
        rows, matched = frame[f"rows_{arm}"].to_numpy(), frame[f"matched_{arm}"].to_numpy()
        out[f"rows_lost_{arm}"] = np.bincount(cell, weights=rows - matched, minlength=width).astype(np.int64)
        out[f"cases_lost_{arm}"] = np.bincount(cell, weights=(rows > 0) & (matched == 0), minlength=width).astype(np.int64)
    return out


def _reasons(out: pd.DataFrame, a: str, b: str, dimension: Dimension, one_arm: np.ndarray, n_cases: np.ndarray) -> np.ndarray:
    reasons = np.full(len(out), None, dtype=object)
    for i in np.flatnonzero(one_arm):
        has_a, has_b = out["rows_lost_a"].iat[i] > 0, out["rows_lost_b"].iat[i] > 0
        if has_a and has_b:
            reasons[i] = f"{a} and {b} answered no question here in common: nothing to compare"
        else:
            missing = b if has_a else a
            reasons[i] = f"{dimension.short} {missing} has no row here: left out of the comparison"
    few = ~one_arm & (n_cases < trust.MIN_CASES)
    reasons[few] = trust.ONE_CASE
    return reasons


def left_out(frame: pd.DataFrame) -> list[str]:
    """One line per metric and reason of the cells a comparison could not make (one arm has no row
    there): the values of each dimension among them, for the CLI's stderr and the explorer."""
    if frame.empty or "reason" not in frame:
        return []
    gone = frame[frame["n_questions"].eq(0) & frame["reason"].notna()]
    names = list(frame.columns[1:frame.columns.get_loc("a")])
    lines = []
    for (metric, reason), cells in gone.groupby(["metric", "reason"], sort=False):
        values = "; ".join(f"{name.removeprefix('answer__')}=" + ", ".join(str(v) for v in dict.fromkeys(cells[name]))
                           for name in names)
        lines.append(f"left out of {metric} ({reason.split(': ')[0]}): {values}")
    return lines
