"""Two models, prompt variants, conditions or visibilities compared on the questions both answered
(`hindsight metrics --compare model=A,B`, slice_metrics(compare=...), the explorer's Compare).

For each metric and cell of the other dimensions, the question rows are matched across the two arms
(the same question under the same values of every other key of fct_metric_parts' grain: question,
model, condition, prompt variant, visibility, but the one compared) and kept where both have a
value. The difference is estimate_a - estimate_b over those rows, each arm's estimate the marts'
ratio sum_c S_c / sum_c N_c. Its interval is the percentile interval of the difference in each of the
build's replicates (the same counter-based draws of each cohort as fct_bootstrap_samples: case c
weighted by its multiplicity in replicate r in both arms at once, so what the two arms share cancels),
and its clustered SE Miller's by the delta method: sqrt(sum_c d_c^2), d_c = (S_Ac - N_Ac est_A) / N_A
- (S_Bc - N_Bc est_B) / N_B.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ingest.errors import InputError
from ingest.publish.case_layout import CaseLayout
from ingest.publish.semantic import Dimension, SemanticLayer
from ingest.publish.where import Condition
from ingest.stats import intervals

# what can be compared: the dimension, and its column in fct_metric_parts' grain
COMPARABLE = {"model": "model", "condition": "condition", "answer__prompt_variant": "prompt_variant",
              "answer__visibility": "visibility"}
GRAIN = ("question_id", "model", "condition", "prompt_variant", "visibility")
COLUMNS = ["a", "b", "estimate_a", "estimate_b", "difference", "ci_low", "ci_high", "ci_method", "significant",
           "se_clustered", "n_questions", "n_cases", "n_finite_replicates", "reason"]
FIX = "write --compare DIMENSION=A,B with a model, condition, prompt_variant or visibility, e.g. --compare model=sim:a,sim:b"


def parse_compare(text: str, layer: SemanticLayer) -> tuple[Dimension, str, str]:
    name, sep, values = text.partition("=")
    a, comma, b = values.partition(",")
    if not sep or not comma or not a.strip() or not b.strip():
        raise InputError("--compare", f"{text!r} names no two values", FIX)
    dimension = layer.dimension(name.strip())
    if dimension.name not in COMPARABLE:
        raise InputError("--compare", f"{dimension.name} cannot be compared (its arms share no question row)", FIX)
    if a.strip() == b.strip():
        raise InputError("--compare", f"{a.strip()!r} against itself", "name two different values")
    return dimension, a.strip(), b.strip()


def compare_cells(con, layer: SemanticLayer, metric, dimensions: list[Dimension], rows_sql: str, condition: Condition | None,
                  compared: tuple[Dimension, str, str], numbering: pd.DataFrame, settings: tuple[int, int, str]) -> pd.DataFrame:
    """METRIC's differences, one row per cell of DIMENSIONS (the compared one left out)."""
    dimension, a, b = compared
    replicates, seed, _ = settings
    names = [d.name for d in dimensions]
    keys = ", ".join(f'"{n}"' for n in names)
    match = ", ".join(c for c in GRAIN if c != COMPARABLE[dimension.name])
    visibilities = ", ".join(f"'{v}'" for v in metric.visibilities)
    kept = f"visibility in ({visibilities}) and {metric.denominator} > 0{f' and ({condition.sql})' if condition else ''}"
    frame = con.execute(f"""
        with slice_rows as ({rows_sql}),
        arms as (
            select {keys}, hash(cohort, case_id) as case_key, hash({match}) as match_key,
                cast("{dimension.name}" as varchar) as arm, {metric.numerator} as s, {metric.denominator} as n
            from slice_rows
            where {kept} and cast("{dimension.name}" as varchar) in (?, ?))
        select {', '.join(f'a."{n}"' for n in names)}, a.case_key, sum(a.s) as sa, sum(a.n) as na, sum(b.s) as sb, sum(b.n) as nb
        from arms as a
        inner join arms as b on a.match_key = b.match_key and a.arm = ? and b.arm = ?
        group by all""", [a, b, a, b]).df()
    if frame.empty:
        return pd.DataFrame(columns=["metric", *names, *COLUMNS])
    cells = frame[names].drop_duplicates().sort_values(names, na_position="last").reset_index(drop=True)
    cells["cell"] = np.arange(len(cells))
    frame = frame.merge(cells, on=names, how="left").merge(numbering[["case_key", "cohort_id", "case_index"]], on="case_key")
    layout = CaseLayout(numbering, frame["cohort_id"].to_numpy(), frame["case_index"].to_numpy(), frame["cell"].to_numpy(),
                        len(cells))
    sa, na, sb, nb = (layout.summed(frame[c].to_numpy()) for c in ("sa", "na", "sb", "nb"))
    total_a, total_b = na.sum(axis=0), nb.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        est_a, est_b = sa.sum(axis=0) / total_a, sb.sum(axis=0) / total_b
        deviations = (sa - na * est_a) / total_a - (sb - nb * est_b) / total_b
        se = np.sqrt((deviations * deviations).sum(axis=0))
        replicate_differences = np.vstack([
            (block @ sa) / (block @ na) - (block @ sb) / (block @ nb) for block in layout.replicate_blocks(seed, replicates)])
    low, high = intervals.percentile(replicate_differences)
    n_cases = (na > 0).sum(axis=0)
    few = n_cases < 2
    out = cells.drop(columns="cell")
    out.insert(0, "metric", metric.name)
    out["a"], out["b"] = a, b
    out["estimate_a"], out["estimate_b"], out["difference"] = est_a, est_b, est_a - est_b
    out["ci_low"], out["ci_high"] = np.where(few, np.nan, low), np.where(few, np.nan, high)
    out["ci_method"] = "percentile"
    out["significant"] = (out["ci_low"] > 0) | (out["ci_high"] < 0)
    out["se_clustered"] = np.where(few, np.nan, se)
    out["n_questions"] = total_a.astype(np.int64)
    out["n_cases"] = n_cases.astype(np.int64)
    out["n_finite_replicates"] = np.isfinite(replicate_differences).sum(axis=0).astype(np.int64)
    out["reason"] = np.where(few, "1 case: a case-clustered interval (and SE) needs at least 2", None)
    return out[["metric", *names, *COLUMNS]]

