"""Any slice of the paper's metrics with its case-clustered interval (`hindsight metrics`, and
slice_metrics for notebooks).

A slice is the metrics' cells by the dimensions an analyst names (the semantic layer's:
ingest/publish/semantic.py), over the rows of fct_metric_parts an optional --where keeps. Each cell
is the estimator the marts use (ingest/stats/bootstrap.cell_statistics): the estimate sum_c S_c /
sum_c N_c over cases c, Miller's clustered SE, the MDE, and the interval by the build's ci_method
from the build's replicates: the same counter-based draws of each cohort as fct_bootstrap_samples
and agg_metrics (the build's bootstrap_replicates and bootstrap_seed, read from dim_build). So the
cuts the marts have give the marts' numbers. A cell always keeps prompt_variant and visibility apart,
as agg_metrics does; a slice without the cohort pools the cohorts, each resampled within itself
(replicate r draws every cohort's cases as agg_metrics' replicate r does).

It reads the published snapshot, pinned when it starts: it never waits for a build, nor holds one up.
"""
from __future__ import annotations

import json
import math
import threading
from contextlib import closing, contextmanager
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from ingest.db import warehouse_path
from ingest.errors import InputError
from ingest.publish.case_layout import CaseLayout
from ingest.publish.compare import check_values, compare_cells, parse_compare
from ingest.publish.marts import public_mart_properties
from ingest.publish.numbers import fixed
from ingest.publish.query import engine_message
from ingest.publish.semantic import Dimension, SemanticLayer, dimension_sql, semantic_layer
from ingest.publish.where import Condition, parse_where
from ingest.serve.snapshots import open_marts
from ingest.stats import bootstrap, multiplicity, trust

# the answer cell's own keys, kept in every cell (never pooled), after the analyst's dimensions
KEPT = ("answer__prompt_variant", "answer__visibility")
COLUMNS = ["estimate", "ci_low", "ci_high", "ci_method", "significant", "few_cases", "caution", "se_clustered", "mde_80",
           "n_questions", "n_cases", "n_valid", "validity_rate", "n_answers", "n_finite_replicates", "reason"]


# a slice that runs longer is stopped (a --where's subquery can run for ever): a BI tool's limit
DEFAULT_TIMEOUT = 120
LIST_HINT = "`hindsight metrics --list` shows them"


def where_names(layer: SemanticLayer) -> set[str]:
    """What a --where may name: the dimensions, by their full and their bare names."""
    return {name for d in layer.dimensions.values() for name in (d.name, d.short)}


def _parts_columns(layer: SemanticLayer) -> set[str]:
    return {c["name"] for c in next(m for m in public_mart_properties() if m["name"] == layer.parts)["columns"]}


def _carried(layer: SemanticLayer) -> set[str]:
    """The dimensions fct_metric_parts carries under their own names (it takes them from dim_questions
    and dim_cases): read there, they need no join of 26 M rows at 100x the paper's cases."""
    columns = _parts_columns(layer)
    return {d.name for d in layer.dimensions.values() if d.alias != layer.parts_alias and d.short in columns}


def slice_rows_sql(layer: SemanticLayer, dimensions: list[Dimension], where_columns: set[str]) -> str:
    """fct_metric_parts (whose columns carry most dimensions under their bare names) with each
    dimension a column under its MetricFlow name: the relation --where filters. Only the marts of
    the dimensions it needs and the parts mart does not carry are joined."""
    alias, carried = layer.parts_alias, _carried(layer)
    named = [d for d in layer.dimensions.values() if d in dimensions or d.name in where_columns]
    wanted = {d.alias for d in named if d.name not in carried}
    joins = "".join(f'\n    left join {join.relation} as "{join.alias}" on {join.on}'
                    for name, join in layer.joins.items() if name in wanted)
    selected = {d.name: f'"{alias}".{d.short}' if d.name in carried else dimension_sql(d)
                for d in layer.dimensions.values() if d.alias == alias or d.name in carried or d.alias in wanted}
    # a dimension named as a parts column (model, condition) replaces it: one column of each name, so
    # no message names DuckDB's renamed duplicate (condition_1)
    same = ", ".join(f'"{name}"' for name in selected if name in _parts_columns(layer))
    return (f'select "{alias}".*{f" exclude ({same})" if same else ""}, '
            + ", ".join(f'{sql} as "{name}"' for name, sql in selected.items())
            + f'\n    from {layer.parts} as "{alias}"{joins}')


def _case_numbering(con) -> pd.DataFrame:
    """Each cohort's cases numbered as the bootstrap numbers them (int_bootstrap_cases: the cases with
    questions, in case_id order), with the cohort's size and its number among the cohorts."""
    return con.sql("""
        select cohort, case_id, hash(cohort, case_id) as case_key, cast(dense_rank() over (order by cohort) - 1 as bigint) as cohort_id,
            cast(row_number() over (partition by cohort order by case_id) - 1 as bigint) as case_index,
            cast(count(*) over (partition by cohort) as bigint) as n_cases
        from (select distinct cohort, case_id from dim_questions)""").df()


def _build_settings(con) -> tuple[int, int, str]:
    replicates, seed, method = con.execute("select bootstrap_replicates, bootstrap_seed, ci_method from dim_build").fetchall()[0]
    return int(replicates), int(seed), str(method)


def slice_metrics(metrics: list[str], by: list[str], where: str | None = None, con=None,
                  warehouse: Path | None = None, timeout: float | None = DEFAULT_TIMEOUT, compare: str | None = None,
                  adjust: str = "holm") -> pd.DataFrame:
    """One row per metric and cell of the slice BY (dimension names), over the rows WHERE keeps: the
    estimate, its interval by the build's ci_method, significance, the clustered SE, MDE and counts,
    and `reason` where a cell has no estimate or no interval. Reads the published snapshot of
    WAREHOUSE (default: $HINDSIGHT_DB's), or the open connection CON to the marts (the serving file,
    as `duckdb.connect("warehouse.marts.duckdb", read_only=True)` opens it), which it leaves as it
    found it. A slice running longer than TIMEOUT seconds (None: no limit) is stopped. With COMPARE
    ("model=A,B", ingest/publish/compare.py), each cell is the difference A - B on the questions both
    answered, with its case-clustered interval from the same replicates, its significance on its own and
    adjusted across the comparison's cells by ADJUST (holm, or bh: Benjamini-Hochberg), and what the
    matching left out."""
    layer = semantic_layer()
    chosen = [layer.metric(name) for name in dict.fromkeys(metrics)]
    if not chosen:
        raise InputError("--metric", "no metric named", f"name one or more of {', '.join(layer.metrics)}")
    dimensions = list(dict.fromkeys(layer.dimension(name) for name in by))
    compared = parse_compare(compare, layer, dimensions) if compare else None
    if adjust not in multiplicity.ADJUSTMENTS:
        raise InputError("--adjust", f"unknown adjustment {adjust!r}", f"use one of {', '.join(multiplicity.ADJUSTMENTS)}")
    dimensions += [layer.dimensions[name] for name in KEPT if layer.dimensions[name] not in dimensions]
    condition = parse_where(where, where_names(layer)) if where and where.strip() else None
    if compared:
        # the compared dimension is each cell's two arms; a kept key (prompt_variant, visibility) may be it
        dimensions = [d for d in dimensions if d != compared[0]]
    if con is None:
        with closing(open_marts(warehouse or warehouse_path())) as own:
            # a connection of its own: the engine refuses any file but the snapshot's, too
            own.execute("set enable_external_access = false")
            return _run(own, layer, chosen, dimensions, condition, timeout, compared, adjust)
    return _run(con, layer, chosen, dimensions, condition, timeout, compared, adjust)


def _run(con, layer, chosen, dimensions, condition, timeout, compared, adjust="holm") -> pd.DataFrame:
    if not compared:
        return _estimate(con, layer, chosen, dimensions, condition, timeout)
    rows_sql = slice_rows_sql(layer, [*dimensions, compared[0]], set(condition.columns) if condition else set())
    settings, numbering = _build_settings(con), _case_numbering(con)
    try:
        with _time_limit(con, timeout):
            check_values(con, *compared, rows_sql)
            trusted = trust.table(con)
            frames = [compare_cells(con, layer, metric, dimensions, rows_sql, condition, compared, numbering, settings,
                                    trusted, adjust) for metric in chosen]
    except duckdb.Error as error:
        raise _engine_error(error) from None
    out = pd.concat([f for f in frames if not f.empty] or frames[:1], ignore_index=True)
    if out.empty or not out["n_questions"].gt(0).any():
        raise InputError("--compare", f"{compared[1]!r} and {compared[2]!r} share no question row with a value"
                         f"{' under --where' if condition else ''}", "compare two values that answered the same questions")
    names = [d.name for d in dimensions]
    return out.sort_values(["metric", *names], kind="stable", na_position="last").reset_index(drop=True)


@contextmanager
def _time_limit(con, seconds: float | None):
    """Interrupt CON's query after SECONDS; the InputError says which limit ended it."""
    timer = threading.Timer(seconds, con.interrupt) if seconds else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        yield
    except duckdb.InterruptException:
        raise InputError("--where", f"the slice ran longer than its time limit of {seconds:g} s and was stopped",
                         "narrow the --where (a subquery that reads every row of a mart is the usual cause), "
                         "or raise the limit with --timeout SECONDS") from None
    finally:
        if timer:
            timer.cancel()


def _engine_error(error: duckdb.Error) -> InputError:
    """A --where DuckDB cannot run, said as the engine says it, with the fix for its kind."""
    message = engine_message(error)
    if isinstance(error, duckdb.CatalogException) and "function" in message.lower():
        fix = "use one of DuckDB's functions (https://duckdb.org/docs/sql/functions/overview) on the dimensions"
    elif isinstance(error, duckdb.BinderException) and "column" in message.lower():
        fix = f"name the dimensions as {LIST_HINT}"
    else:
        fix = f"correct the condition; the dimensions and their names: {LIST_HINT}"
    return InputError("--where", message, fix)


def _estimate(con, layer: SemanticLayer, chosen, dimensions: list[Dimension], condition: Condition | None,
              timeout: float | None) -> pd.DataFrame:
    rows_sql = slice_rows_sql(layer, dimensions, set(condition.columns) if condition else set())
    names = [d.name for d in dimensions]
    keys = ", ".join(f'"{name}"' for name in names)
    parts = sorted({column for metric in chosen for column in (metric.numerator, metric.denominator, metric.valid) if column})
    visibilities = ", ".join(f"'{v}'" for v in sorted({v for metric in chosen for v in metric.visibilities}))
    kept = f"visibility in ({visibilities}){f' and ({condition.sql})' if condition else ''}"
    replicates, seed, method = _build_settings(con)
    numbering = _case_numbering(con)
    try:
        with _time_limit(con, timeout):
            # per cell and case, the parts summed: the one pass over the parts, grouped by two integer keys
            # (at 100x the paper's cases 26 M rows to 8 M sums: 4.6 s, where grouping by the labels took 10)
            con.execute(f"""
                create or replace temp table slice_sums as
                with slice_rows as ({rows_sql})
                select hash({keys}) as cell_key, hash(cohort, case_id) as case_key, sum(n_answers) as n_answers,
                    {', '.join(f'sum({c}) as {c}' for c in parts)}
                from slice_rows
                where {kept}
                group by all""")
            # the labels of the few cells, numbered in their order
            cells = con.sql(f"""
                select row_number() over (order by {keys}) - 1 as cell_id, *
                from (select distinct hash({keys}) as cell_key, {keys} from ({rows_sql}) where {kept})""").df()
        if cells.empty:
            con.execute("drop table if exists slice_sums")
            raise _nothing_matches(condition)
        if cells["cell_key"].duplicated().any() or numbering["case_key"].duplicated().any():
            raise RuntimeError("two cells or cases share a 64-bit hash: report this slice")     # never seen; checked all the same
        con.register("slice_cells", cells[["cell_id", "cell_key"]])
        con.register("slice_numbering", numbering[["case_key", "cohort_id", "case_index"]])
        rows = con.execute(f"""
            select c.cell_id, n.cohort_id, n.case_index, s.n_answers, {', '.join(f's.{c}' for c in parts)}
            from slice_sums as s
            inner join slice_cells as c on c.cell_key = s.cell_key
            inner join slice_numbering as n on n.case_key = s.case_key""").fetchnumpy()
    except duckdb.Error as error:
        raise _engine_error(error) from None
    finally:
        # the caller's connection as it was: no temporary table or registered frame left behind
        for name in ("slice_cells", "slice_numbering"):
            try:
                con.unregister(name)
            except duckdb.Error:
                pass
        try:
            con.execute("drop table if exists slice_sums")
        except duckdb.Error:
            pass
    cells = cells.drop(columns=["cell_id", "cell_key"])
    trusted = trust.table(con)
    frames = [_metric_cells(rows, cells, numbering, metric, replicates, seed, method, trusted) for metric in chosen]
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", *names, *COLUMNS]].sort_values(["metric", *names], kind="stable", na_position="last").reset_index(drop=True)


def _nothing_matches(condition: Condition | None) -> InputError:
    if condition:
        return InputError("--where", f"no rows match --where ({condition.sql})",
                          "loosen the condition; `hindsight query \"select distinct cohort, model from fct_metric_parts\"` "
                          "shows the values there are")
    return InputError("marts", "the published marts hold no scored answer yet",
                      "ask a model (`hindsight answer`), then `hindsight build`")


def _metric_cells(rows: dict, cells: pd.DataFrame, numbering: pd.DataFrame, metric, replicates: int, seed: int,
                  method: str, trusted: pd.DataFrame) -> pd.DataFrame:
    """The statistics of METRIC's cells (those of its visibilities) from the per-case sums ROWS."""
    mine = np.flatnonzero(cells["answer__visibility"].isin(metric.visibilities).to_numpy())
    frame = cells.iloc[mine].reset_index(drop=True)
    frame.insert(0, "metric", metric.name)
    if not len(mine):                                        # no row of the slice has this metric's visibilities
        return frame.reindex(columns=[*frame.columns, *COLUMNS])
    column = np.full(len(cells), -1, dtype=np.int64)
    column[mine] = np.arange(len(mine))
    kept = column[rows["cell_id"]] >= 0
    cell = column[rows["cell_id"][kept]]
    width = len(mine)
    layout = CaseLayout(numbering, rows["cohort_id"][kept], rows["case_index"][kept], cell, width)
    sums, counts = layout.summed(rows[metric.numerator][kept]), layout.summed(rows[metric.denominator][kept])
    valid = np.bincount(cell, weights=rows[metric.valid][kept].astype(np.float64), minlength=width) if metric.valid else None
    answers = np.bincount(cell, weights=rows["n_answers"][kept].astype(np.float64), minlength=width)
    stats = bootstrap.cell_statistics(sums, counts, layout.replicate_blocks(seed, replicates), method=method)
    n_questions = stats["n_questions"].astype(np.int64)
    n_cases = stats["n_cases"].astype(np.int64)
    no_value = n_questions == 0
    few_cases = ~no_value & (n_cases < trust.MIN_CASES)          # no interval at all
    estimate = np.where(no_value, np.nan, stats["estimate"])
    low = np.where(no_value | few_cases, np.nan, stats["ci_low"])
    high = np.where(no_value | few_cases, np.nan, stats["ci_high"])
    frame["estimate"] = estimate
    frame["ci_low"], frame["ci_high"] = low, high
    frame["ci_method"] = method
    frame["significant"] = (low > 0) | (high < 0)
    frame["few_cases"], frame["caution"] = trust.flags(np.where(no_value, 0, n_cases), method, trust.kind_of(metric.visibilities),
                                                       trusted)
    # a clustered SE from one cluster is undefined (Miller's formula gives 0), and so is its MDE
    frame["se_clustered"] = np.where(no_value | few_cases, np.nan, stats["se_clustered"])
    frame["mde_80"] = np.where(no_value | few_cases, np.nan, stats["mde_80"]) if "paired" in metric.visibilities else np.nan
    frame["n_questions"] = n_questions
    frame["n_cases"] = n_cases
    frame["n_valid"] = valid.astype(np.int64) if valid is not None else 0
    with np.errstate(invalid="ignore", divide="ignore"):
        frame["validity_rate"] = np.where(no_value, np.nan, frame["n_valid"] / np.maximum(n_questions, 1))
    frame["n_answers"] = answers.astype(np.int64)
    frame["n_finite_replicates"] = stats["n_finite_replicates"].astype(np.int64)
    noun = "pair" if "paired" in metric.visibilities else "answer"
    reasons = np.full(len(frame), None, dtype=object)
    reasons[(frame["n_valid"].to_numpy() == 0) & ~no_value] = (
        f"no valid {noun}: every one is invalid or truncated (scored as wrong in the estimate)")
    reasons[few_cases] = trust.ONE_CASE
    reasons[no_value] = (f"no question in the cell has a {metric.name} value (not defined for its eval_target, "
                         "or free responses not judged yet)")
    frame["reason"] = reasons
    return frame


def records(frame: pd.DataFrame) -> list[dict]:
    """FRAME's rows as JSON-ready dicts: full precision (Python's shortest round-trip repr), None for NaN."""
    def plain(value):
        value = value.item() if isinstance(value, np.generic) else value
        return None if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA else value
    return [{k: plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def check_out(out: Path | None) -> None:
    """OUT can be written: a file's name in a folder that exists (said before the slice is computed)."""
    if out is None:
        return
    out = Path(out)
    if out.is_dir():
        raise InputError("--out", f"{out} is a folder", f"name a file in it, e.g. --out {out / 'slice.csv'}")
    if not out.parent.is_dir():
        raise InputError("--out", f"the folder {out.parent} does not exist",
                         f"create it first (mkdir -p {out.parent}) or write into a folder that exists")


def write_slice(frame: pd.DataFrame, fmt: str, out: Path | None) -> str:
    """FRAME as FMT (table, csv, json; parquet needs OUT), written to OUT if given: what to print."""
    check_out(out)
    try:
        return _write(frame, fmt, out)
    except OSError as error:
        raise InputError("--out", f"cannot write {out} ({error.strerror or error})", "name a file you can write") from None


def _write(frame: pd.DataFrame, fmt: str, out: Path | None) -> str:
    if fmt == "parquet":
        frame.to_parquet(out, index=False)
        return f"{len(frame)} cells -> {out}\n"
    if fmt == "csv":
        text = frame.to_csv(index=False)
    elif fmt == "json":
        text = json.dumps(records(frame), indent=1) + "\n"
    else:
        text = _table(frame)
    if out:
        Path(out).write_text(text)
        return f"{len(frame)} cells -> {out}\n"
    return text


def _table(frame: pd.DataFrame) -> str:
    """FRAME for reading: numbers rounded, `significant` as a word with its flag beside it, and what
    the columns share (the interval method, a comparison's family and adjustment) said once below."""
    shown = frame.copy()
    numbers = ("estimate", "estimate_a", "estimate_b", "difference", "ci_low", "ci_high", "se_clustered", "mde_80")
    for column, places, signed in [*((c, 3, True) for c in numbers), ("validity_rate", 2, False),
                                   ("p_unadjusted", 4, False), ("p_adjusted", 4, False)]:
        if column in shown:
            shown[column] = shown[column].map(lambda v, p=places, s=signed: "" if pd.isna(v) else fixed(v, p, s))
    for column in ("significant", "significant_unadjusted", "significant_adjusted"):
        if column in shown:
            shown[column] = [trust.significance_word(v, f) for v, f in zip(frame[column], frame["few_cases"])]
    footer = f"interval: {frame['ci_method'].iloc[0]}" if len(frame) else "interval: none"
    if "adjustment" in frame and len(frame):
        footer += (f"; significant_adjusted: {frame['adjustment'].iloc[0]} across each family ("
                   + "; ".join(dict.fromkeys(frame["family"])) + ")")
    shown = shown.drop(columns=[c for c in ("ci_method", "n_finite_replicates", "few_cases", "adjustment", "family")
                                if c in shown]).fillna("")
    return shown.to_string(index=False) + f"\n({len(frame)} cells; {footer})\n"
