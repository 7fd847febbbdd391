"""A dashboard bundle Apache Superset (6.1) imports: `hindsight bi superset --out DIR`, and its import
into a running Superset: `hindsight bi import`.

The bundle (Superset's import format v1 of type `assets`: metadata.yaml, databases/, datasets/,
charts/, dashboards/, zipped under one folder) holds
- the serving file as a read-only DuckDB database (its URI as this machine sees it, or --serving-uri
  for a Superset that sees the file elsewhere);
- four datasets: fct_metric_parts, whose Superset metrics are the semantic layer's metrics as
  aggregate SQL (ingest/publish/semantic.py: sum of the numerator over sum of the denominator, exact
  for any roll-up) that give no number for a group pooling the prompt variants or visibilities;
  agg_metrics and agg_metrics_by_format, the paper's cuts with their intervals (a column
  `estimate [low, high]`); and dim_build, the build shown;
- charts a reader of the paper expects, each keeping prompt_variant apart, and native filters for
  cohort, model, condition and prompt variant.
Every object has a fixed UUID (uuid5 of its name). Superset's dashboard import leaves an existing
database, dataset or chart as it was; its assets import (`/api/v1/assets/import/`, which `hindsight bi
import` calls) overwrites each in place, keeping its id, so a newer bundle updates everything.
"""
from __future__ import annotations

import csv
import json
import uuid
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import yaml

from ingest.config import PROJECT_DIR
from ingest.errors import InputError
from ingest.publish.marts import public_mart_properties
from ingest.publish.semantic import semantic_layer

NAMESPACE = uuid.UUID("5d0c1f3e-7a0b-4f5e-9d62-68a1c3b9e0a4")
ROOT = "hindsight_dashboard"
DATABASE = "hindsight marts"
SLUG = "hindsight-bias"
SUPERSET_TYPES = {"string": "VARCHAR", "double": "DOUBLE", "integer": "INTEGER", "bigint": "BIGINT",
                  "boolean": "BOOLEAN", "timestamp": "TIMESTAMP", "date": "DATE"}
ROW_LIMIT = 10000
# column headers in words (a column not named here: its name, capitalised, underscores as spaces)
HEADERS = {"cohort": "Cohort", "model": "Model", "condition": "Condition", "prompt_variant": "Prompt variant",
           "visibility": "Visibility", "format": "Format", "options_type": "Options type", "eval_target": "Eval target",
           "relpos_band": "RelPos band (by value)", "estimate": "Estimate", "ci_low": "95% CI low", "ci_high": "95% CI high",
           "ci_method": "CI method", "significant": "Significant (CI excludes 0)", "n_cases": "Cases",
           "few_cases": "Few cases (interval below its promise)", "caution": "Caution",
           "significant_flagged": "Significant (CI excludes 0; flagged when few cases)",
           "n_questions": "Question rows", "n_valid": "Valid question rows", "validity_rate": "Validity rate",
           "se_clustered": "Clustered SE", "mde_80": "MDE (80% power)", "metric": "Metric",
           "dbt_invocation_id": "Build (snapshot id)", "built_at": "Built at (UTC)", "warehouse_version": "Warehouse version",
           "bootstrap_replicates": "Bootstrap replicates", "bootstrap_seed": "Bootstrap seed"}
NUMBER_FORMATS = {"estimate": ".3f", "ci_low": ".3f", "ci_high": ".3f", "se_clustered": ".3f", "mde_80": ".3f",
                  "validity_rate": ".2f"}
BANDS = ("early", "middle", "late")


def object_uuid(kind: str, name: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{kind}:{name}"))


def _header(name: str) -> str:
    return HEADERS.get(name, name.replace("_", " ").capitalize())


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def condition_labels() -> dict[str, str]:
    with (PROJECT_DIR / "seeds" / "conditions.csv").open(newline="") as handle:
        return {row["condition"]: row["label"] for row in csv.DictReader(handle)}


def calculated_columns(mart: str, names: set[str]) -> list[dict]:
    """Columns computed from a mart's own: the interval as text, conditions and RelPos bands in words
    that sort in their order."""
    out = []

    def add(name: str, header: str, expression: str, description: str) -> None:
        out.append({"column_name": name, "verbose_name": header, "expression": expression, "type": "VARCHAR",
                    "is_dttm": False, "groupby": True, "filterable": True, "description": description, "is_active": True})

    if {"estimate", "ci_low", "ci_high", "few_cases"} <= names:
        add("estimate_ci", "Estimate [95% CI]",
            "case when estimate is null then null "
            "when ci_low is null then printf('%.3f (no interval: 1 case)', round(estimate, 3)) "
            "else printf('%.3f [%.3f, %.3f]', round(estimate, 3), round(ci_low, 3), round(ci_high, 3)) "
            "|| case when few_cases then ' (few cases)' else '' end end",
            # round() first: halves away from zero, as the number columns' d3 format rounds them (printf alone
            # rounds 0.0625 to even, 0.062, beside the column's 0.063)
            "The estimate and its 95% case-clustered bootstrap interval (ci_method); a one-case cell has none; "
            "(few cases): too few cases for the interval to cover 95% (see Caution).")
    if {"significant", "few_cases"} <= names:
        add("significant_flagged", "Significant (CI excludes 0; flagged when few cases)",
            "case when significant and few_cases then 'yes (few cases)' when significant then 'yes' else 'no' end",
            "The 95% interval excludes 0; '(few cases)' beside it where the cell has too few cases for its interval "
            "method to cover 95% (the coverage bench: dim_interval_trust): read it with its Caution.")
    if "condition" in names:
        cases = " ".join(f"when {_sql_text(c)} then {_sql_text(f'{c} · {label}')}" for c, label in condition_labels().items())
        add("condition_label", "Condition", f"case condition {cases} else condition end",
            "The input condition and what the model was given (seed conditions).")
    if "relpos_band" in names:
        cases = " ".join(f"when {_sql_text(b)} then {_sql_text(f'{i} · {b}')}" for i, b in enumerate(BANDS, 1))
        add("relpos_band_label", "RelPos band", f"case relpos_band {cases} end",
            "Where the cutoff falls in the timeline (RelPos: early < 1/3 <= middle < 2/3 <= late), in that order.")
    return out


def _columns(mart: str) -> list[dict]:
    properties = next(m for m in public_mart_properties() if m["name"] == mart)
    columns = [{"column_name": c["name"], "type": SUPERSET_TYPES.get(c.get("data_type", "string"), "VARCHAR"),
                "is_dttm": c.get("data_type") == "timestamp", "groupby": True, "filterable": True,
                "description": c.get("description"), "expression": None, "verbose_name": _header(c["name"]), "is_active": True}
               for c in properties.get("columns", [])]
    return columns + calculated_columns(mart, {c["column_name"] for c in columns})


def _dataset(mart: str, metrics: list[dict], description: str, sql: str | None = None, columns: list[dict] | None = None) -> dict:
    return {"table_name": mart, "schema": "main", "main_dttm_col": None, "description": description, "sql": sql,
            "params": None, "template_params": None, "filter_select_enabled": True, "extra": None, "cache_timeout": None,
            "uuid": object_uuid("dataset", mart), "database_uuid": object_uuid("database", DATABASE), "version": "1.0.0",
            "columns": columns if columns is not None else _columns(mart), "metrics": metrics, "offset": 0,
            "normalize_columns": False}


# each interval of agg_metrics as a row with a label of its own (cohort · model · condition · prompt), which
# the interval plot puts on its axis: one row per cell, its estimate and bounds three named metrics
INTERVALS = "agg_metrics_intervals"
INTERVALS_SQL = """select cohort, model, condition, prompt_variant, metric, visibility, estimate, ci_low, ci_high,
    cohort || ' · ' || model || ' · ' || condition || ' · ' || prompt_variant
        || case when few_cases then ' (few cases)' else '' end as cell
from agg_metrics
where ci_low is not null"""
# the plot's three series, named as its tooltip and legend say them
BOUNDS = [("estimate", "estimate"), ("ci_low", "95% low"), ("ci_high", "95% high")]


def interval_dataset() -> dict:
    kept = {"cohort", "model", "condition", "prompt_variant", "metric", "visibility", "estimate", "ci_low", "ci_high"}
    columns = [c for c in _columns("agg_metrics") if c["column_name"] in kept or c["column_name"] == "condition_label"]
    columns.append({"column_name": "cell", "type": "VARCHAR", "is_dttm": False, "groupby": True, "filterable": True,
                    "description": "The cell: cohort · model · condition · prompt variant, and '(few cases)' where it has "
                                   "too few cases for its interval to cover 95%.", "expression": None,
                    "verbose_name": "Cell", "is_active": True})
    return _dataset(INTERVALS, [], "agg_metrics' cells with an interval, each with a label of its own for the interval "
                                   "plot's axis; cells without an interval (one case) are left out.", INTERVALS_SQL, columns)


# fct_metric_parts with a row of zero parts for each RelPos band a cohort, model, condition, prompt variant
# and visibility has no question in: every sum is unchanged, and a chart by band keeps every band's column
# however its filters narrow it (the band then shows no value, not no column)
PARTS_SQL = """with keys as (select distinct cohort, model, condition, prompt_variant, visibility from fct_metric_parts),
    bands as (select * from (values ('early'), ('middle'), ('late')) as b (relpos_band)),
    missing as (
        select k.*, b.relpos_band
        from keys as k cross join bands as b
        anti join (select distinct cohort, model, condition, prompt_variant, visibility, relpos_band from fct_metric_parts) as p
            using (cohort, model, condition, prompt_variant, visibility, relpos_band))
select * from fct_metric_parts
union all by name
select missing.*, {zeros} from missing"""


def parts_dataset() -> dict:
    columns = _columns("fct_metric_parts")
    zeros = ", ".join(f"0 as {c['column_name']}" for c in columns if c["type"] in ("BIGINT", "DOUBLE", "INTEGER")
                      and c["expression"] is None and c["column_name"] not in ("cutoff_hours", "relpos"))
    return _dataset("fct_metric_parts", parts_metrics(),
                    "The additive parts of every metric: its Superset metrics sum them (exact for any roll-up) and stay empty "
                    "for a group that pools prompt variants. A row of zero parts stands for each RelPos band a group has "
                    "no question in, so a chart by band keeps the band.", PARTS_SQL.format(zeros=zeros), columns)


def _metric(name: str, header: str, expression: str, description: str, d3format: str, warning: str | None = None) -> dict:
    return {"metric_name": name, "verbose_name": header, "expression": expression, "description": description,
            "d3format": d3format, "metric_type": None, "warning_text": warning, "extra": None}


def guarded(metric) -> str:
    """The metric's BI expression, NULL for a group whose valued rows span more than one prompt variant
    (or visibility): those are different treatments, and a chart by model alone would pool them."""
    keys = "prompt_variant" if len(metric.visibilities) == 1 else "prompt_variant || '/' || visibility"
    return (f"case when count(distinct case when {metric.denominator} > 0 then {keys} end) <= 1 "
            f"then {metric.bi_expression()} end")


POOLING = ("Empty where a group pools the standard and warning prompts{also}: group or filter prompt_variant{keep}.")


def parts_metrics() -> list[dict]:
    """The semantic layer's metrics as Superset metrics of the fct_metric_parts dataset."""
    out = []
    for metric in semantic_layer().metrics.values():
        both = len(metric.visibilities) > 1
        pooling = POOLING.format(also=" (or full and masked answers)" if both else "",
                                 keep=" and visibility" if both else "")
        out.append(_metric(metric.name, metric.label, guarded(metric),
                           f"{metric.description} ({'|'.join(metric.visibilities)}; a ratio of summed parts: exact for any "
                           f"roll-up). {pooling}", ".3f", pooling))
        out.append(_metric(f"{metric.name}_n_questions", f"{metric.label}: question rows", f"sum({metric.denominator})",
                           "Question rows (a question under one model, condition and prompt variant) with a value.", ",d"))
        if metric.valid:
            out.append(_metric(f"{metric.name}_validity_rate", f"{metric.label}: validity rate",
                               f"sum({metric.valid}) / nullif(sum({metric.denominator}), 0)",
                               "Share of those question rows whose every sample is valid.", ".2f"))
    return out


def cell_metrics() -> list[dict]:
    """agg_metrics' estimate as a metric that never averages: a group of more than one cell has none."""
    return [_metric("one_cell_estimate", "Estimate (one cell)", "case when count(*) = 1 then max(estimate) end",
                    "The estimate of one cell; empty where a group holds several (an average of estimates is not the "
                    "estimate of their pooled questions: use fct_metric_parts or hindsight metrics).", ".3f",
                    "Never averaged: filter metric, visibility and prompt_variant down to one cell per group.")]


def _filter(column: str, values: list[str]) -> tuple[dict, dict]:
    """(the chart's adhoc filter, its query-context filter)."""
    operator = "==" if len(values) == 1 else "IN"
    adhoc = {"clause": "WHERE", "expressionType": "SIMPLE", "subject": column, "operator": operator,
             "comparator": values[0] if len(values) == 1 else values, "isExtra": False}
    return adhoc, {"col": column, "op": operator, "val": values[0] if len(values) == 1 else values}


def _chart(name: str, title: str, dataset: str, description: str, filters: list[tuple[str, list[str]]],
           columns: list[str], metrics: list[str] | None, order: list[str] | None = None) -> dict:
    """A table chart: raw rows (metrics None) or one row per group with the dataset's saved metrics,
    numbers formatted, ordered by ORDER (default: the first four columns)."""
    adhoc, query_filters = zip(*(_filter(c, v) for c, v in filters)) if filters else ((), ())
    order = order or columns[:4]
    params = {"viz_type": "table", "datasource": "0__table", "adhoc_filters": list(adhoc), "row_limit": ROW_LIMIT,
              "order_desc": False, "table_timestamp_format": "%Y-%m-%d %H:%M:%S", "include_search": True,
              "server_pagination": False, "show_cell_bars": False, "color_pn": True, "allow_rearrange_columns": True,
              "column_config": {c: {"d3NumberFormat": f} for c, f in NUMBER_FORMATS.items() if c in columns}}
    if metrics is None:
        params.update(query_mode="raw", all_columns=columns, order_by_cols=[json.dumps([c, True]) for c in order])
        query = {"columns": columns, "metrics": [], "orderby": [[c, True] for c in order]}
    else:
        params.update(query_mode="aggregate", groupby=columns, metrics=metrics, all_columns=[], percent_metrics=[])
        query = {"columns": columns, "metrics": metrics, "orderby": [[c, True] for c in order]}
    query.update(filters=list(query_filters), row_limit=ROW_LIMIT, extras={"having": "", "where": ""},
                 annotation_layers=[], applied_time_extras={}, custom_form_data={}, custom_params={}, url_params={})
    context = {"datasource": {"id": 0, "type": "table"}, "force": False, "queries": [query], "form_data": params,
               "result_format": "json", "result_type": "full"}
    return {"slice_name": title, "description": description, "viz_type": "table", "params": params,
            "query_context": json.dumps(context), "cache_timeout": None, "uuid": object_uuid("chart", name),
            "version": "1.0.0", "dataset_uuid": object_uuid("dataset", dataset), "certified_by": None,
            "certification_details": None}


def _pivot(name: str, title: str, dataset: str, description: str, filters: list[tuple[str, list[str]]],
           rows: list[str], columns: list[str], metrics: list[str]) -> dict:
    """A pivot table of the dataset's saved metrics: ROWS down, COLUMNS across, both in their order
    (the labels sort as their values do), no totals (a sum of ratios is not a ratio)."""
    chart = _chart(name, title, dataset, description, filters, rows + columns, metrics)
    params = {key: value for key, value in chart["params"].items() if key not in ("groupby", "all_columns", "query_mode",
                                                                                   "percent_metrics", "column_config")}
    params.update(viz_type="pivot_table_v2", groupbyRows=rows, groupbyColumns=columns, metricsLayout="COLUMNS",
                  aggregateFunction="Sum", rowOrder="key_a_to_z", colOrder="key_a_to_z", rowTotals=False, colTotals=False,
                  rowSubTotals=False, colSubTotals=False, transposePivot=False, combineMetric=True, valueFormat="SMART_NUMBER")
    context = json.loads(chart["query_context"])
    context["form_data"] = params
    chart.update(viz_type="pivot_table_v2", params=params, query_context=json.dumps(context))
    return chart


def _interval_plot(name: str, title: str, description: str, filters: list[tuple[str, list[str]]]) -> dict:
    """A forest plot of INTERVALS: a row per cell (its label on the vertical axis), the estimate and both
    bounds as three series of markers named as the tooltip says them (estimate, 95% low, 95% high)."""
    adhoc, query_filters = zip(*(_filter(c, v) for c, v in filters))
    metrics = [{"expressionType": "SQL", "sqlExpression": f"max({column})", "label": label, "hasCustomLabel": True}
               for column, label in BOUNDS]
    params = {"viz_type": "echarts_timeseries_scatter", "datasource": "0__table", "x_axis": "cell", "x_axis_sort": "cell",
              "x_axis_sort_asc": False, "metrics": metrics, "groupby": [], "adhoc_filters": list(adhoc),
              "row_limit": ROW_LIMIT, "orientation": "horizontal", "xAxisForceCategorical": True, "rich_tooltip": True,
              "tooltipSortByMetric": False, "showTooltipTotal": False, "showTooltipPercentage": False,
              "y_axis_format": ".3f", "markerSize": 9, "show_legend": True,
              "legendType": "plain", "legendOrientation": "top", "x_axis_title": "", "y_axis_title": "ΔHTR",
              "y_axis_title_position": "Left", "xAxisLabelInterval": 0, "truncateXAxis": False, "zoomable": False,
              "color_scheme": "supersetColors", "time_grain_sqla": None}
    axis = {"columnType": "BASE_AXIS", "sqlExpression": "cell", "label": "cell", "expressionType": "SQL"}
    query = {"columns": [axis], "metrics": metrics, "filters": list(query_filters), "row_limit": ROW_LIMIT,
             "orderby": [["cell", False]], "extras": {"having": "", "where": ""}, "annotation_layers": [],
             "series_columns": [], "series_limit": 0,
             "post_processing": [{"operation": "pivot", "options": {"index": ["cell"], "columns": [], "drop_missing_columns": False,
                                                                    "aggregates": {label: {"operator": "mean"} for _, label in BOUNDS}}},
                                 {"operation": "flatten"}]}
    context = {"datasource": {"id": 0, "type": "table"}, "force": False, "queries": [query], "form_data": params,
               "result_format": "json", "result_type": "full"}
    return {"slice_name": title, "description": description, "viz_type": "echarts_timeseries_scatter", "params": params,
            "query_context": json.dumps(context), "cache_timeout": None, "uuid": object_uuid("chart", name), "version": "1.0.0",
            "dataset_uuid": object_uuid("dataset", INTERVALS), "certified_by": None, "certification_details": None}


def charts() -> dict[str, dict]:
    return {
        "build": _chart(
            "build", "The build shown", "dim_build",
            "The published snapshot every chart reads: the build's dbt invocation id, when it ran, and the "
            "bootstrap behind the intervals. Each query reads the snapshot current when it runs.",
            [], ["built_at", "dbt_invocation_id", "ci_method"], None),
        "delta_htr_interval": _chart(
            "delta_htr_interval", "ΔHTR by model × condition, with its 95% interval", "agg_metrics",
            "agg_metrics: each cell's estimate and its case-clustered bootstrap interval (one row per cohort, model, "
            "condition and prompt variant; never average these estimates).",
            [("metric", ["delta_htr"]), ("visibility", ["paired"])],
            ["cohort", "model", "condition_label", "prompt_variant", "estimate_ci", "significant_flagged", "n_cases",
             "n_questions", "estimate", "ci_low", "ci_high", "caution"], None),
        "delta_htr_interval_plot": _interval_plot(
            "delta_htr_interval_plot", "ΔHTR with its 95% interval (each row a cell: estimate, 95% low, 95% high)",
            "Each cell of agg_metrics drawn as its interval: a row per cohort · model · condition · prompt variant, its "
            "estimate and the two ends of its 95% case-clustered bootstrap interval (hover a row for the three); a row "
            "whose two ends lie on one side of 0 is significant, unless its label says (few cases): too few cases for its "
            "interval to cover 95%. Narrow the rows with the filters; one-case cells have no interval and no row.",
            [("metric", ["delta_htr"]), ("visibility", ["paired"])]),
        "acc_by_format": _chart(
            "acc_by_format", "Acc by format, with its 95% interval", "agg_metrics_by_format",
            "agg_metrics_by_format: accuracy per cohort, model, condition, question format, prompt variant and "
            "visibility, with the case-clustered bootstrap interval of each cell.",
            [("metric", ["acc"])],
            ["cohort", "model", "condition_label", "format", "options_type", "prompt_variant", "visibility", "estimate_ci",
             "n_questions", "estimate", "ci_low", "ci_high", "caution"], None,
            order=["cohort", "model", "condition_label", "format"]),
        "delta_htr_by_relpos_band": _pivot(
            "delta_htr_by_relpos_band", "ΔHTR by RelPos band (summed parts; intervals: hindsight metrics)", "fct_metric_parts",
            "Is hindsight bias larger when the cutoff falls early? ΔHTR per model and prompt variant (rows) and RelPos band "
            "(columns, early to late), summed from fct_metric_parts (cohorts and conditions pooled: an exact roll-up); "
            "`hindsight metrics --metric delta_htr --by model,relpos_band` gives each cell its interval.",
            [("visibility", ["paired"])], ["model", "prompt_variant"], ["relpos_band_label"],
            ["delta_htr", "delta_htr_n_questions"]),
    }


NOTE = ("**Hindsight bias: the paper's metrics and their slices.** Every estimate is a ratio (a mean over question "
        "rows): a roll-up of `fct_metric_parts` is exact, an average of estimates is not, and the dataset's metrics "
        "stay empty for a group that pools the standard and warning prompts. Intervals are 95% case-clustered "
        "bootstrap intervals; for any other slice: `hindsight metrics --metric delta_htr --by model,relpos_band`. "
        "The filters on the left narrow every chart (cohort, model, condition, prompt variant).")
# (name, header, dataset): the native filters, each applied to every chart with that column
FILTERS = [("cohort", "Cohort", "fct_metric_parts"), ("model", "Model", "fct_metric_parts"),
           ("condition_label", "Condition", "fct_metric_parts"), ("prompt_variant", "Prompt variant", "fct_metric_parts")]
LAYOUT = {"ROW-note": ["MARKDOWN-note", "CHART-build"], "ROW-plot": ["CHART-delta_htr_interval_plot"],
          "ROW-interval": ["CHART-delta_htr_interval"],
          "ROW-format": ["CHART-acc_by_format"], "ROW-band": ["CHART-delta_htr_by_relpos_band"]}
WIDTHS = {"MARKDOWN-note": 6, "CHART-build": 6}
HEIGHTS = {"build": 30, "delta_htr_interval_plot": 170}      # grid units of 8 px: the plot's 60 rows readable


def native_filters(chart_ids: dict[str, int]) -> list[dict]:
    return [{"id": f"NATIVE_FILTER-{column}", "name": header, "filterType": "filter_select", "type": "NATIVE_FILTER",
             "targets": [{"column": {"name": column}, "datasetUuid": object_uuid("dataset", dataset)}],
             "controlValues": {"enableEmptyFilter": False, "defaultToFirstItem": False, "multiSelect": True,
                               "searchAllOptions": False, "inverseSelection": False},
             "defaultDataMask": {"extraFormData": {}, "filterState": {}, "ownState": {}},
             "cascadeParentIds": [], "scope": {"rootPath": ["ROOT_ID"], "excluded": [chart_ids["build"]]},
             "description": f"Only these {header.lower()}s, in every chart."}
            for column, header, dataset in FILTERS]


def dashboard(chart_configs: dict[str, dict]) -> dict:
    # the ids the bundle gives its charts: Superset maps them to the imported charts' own ids
    chart_ids = {name: number for number, name in enumerate(chart_configs, 1)}
    position = {"DASHBOARD_VERSION_KEY": "v2",
                "ROOT_ID": {"type": "ROOT", "id": "ROOT_ID", "children": ["GRID_ID"]},
                "GRID_ID": {"type": "GRID", "id": "GRID_ID", "children": list(LAYOUT), "parents": ["ROOT_ID"]},
                "HEADER_ID": {"id": "HEADER_ID", "type": "HEADER", "meta": {"text": "Hindsight bias"}}}
    for row, children in LAYOUT.items():
        position[row] = {"type": "ROW", "id": row, "children": children, "parents": ["ROOT_ID", "GRID_ID"],
                         "meta": {"background": "BACKGROUND_TRANSPARENT"}}
    position["MARKDOWN-note"] = {"type": "MARKDOWN", "id": "MARKDOWN-note", "children": [],
                                 "parents": ["ROOT_ID", "GRID_ID", "ROW-note"],
                                 "meta": {"width": WIDTHS["MARKDOWN-note"], "height": 30, "code": NOTE}}
    for name, config in chart_configs.items():
        key = f"CHART-{name}"
        row = next(r for r, children in LAYOUT.items() if key in children)
        position[key] = {"type": "CHART", "id": key, "children": [], "parents": ["ROOT_ID", "GRID_ID", row],
                         "meta": {"uuid": config["uuid"], "chartId": chart_ids[name], "sliceName": config["slice_name"],
                                  "width": WIDTHS.get(key, 12), "height": HEIGHTS.get(name, 70)}}
    return {"dashboard_title": "Hindsight bias", "description": None, "css": "", "slug": SLUG,
            "uuid": object_uuid("dashboard", "hindsight bias"), "position": position, "published": True, "version": "1.0.0",
            "metadata": {"color_scheme": "", "refresh_frequency": 0, "expanded_slices": {}, "label_colors": {},
                         "timed_refresh_immune_slices": [], "default_filters": "{}", "chart_configuration": {},
                         "native_filter_configuration": native_filters(chart_ids), "cross_filters_enabled": False},
            "certified_by": None, "certification_details": None}


def serving_uri(serve: Path) -> str:
    return f"duckdb:///{serve.resolve()}"


def database(uri: str) -> dict:
    if not uri.startswith("duckdb:///"):
        raise InputError("--serving-uri", f"{uri!r} is not a DuckDB file URI",
                         "write duckdb:////abs/path/warehouse.marts.duckdb (four slashes: the path as Superset sees it)")
    return {"database_name": DATABASE, "sqlalchemy_uri": uri, "cache_timeout": None,
            "expose_in_sqllab": True, "allow_run_async": False, "allow_ctas": False, "allow_cvas": False, "allow_dml": False,
            "allow_csv_upload": False, "impersonate_user": False,
            # read-only: the serving file is never locked against the builds that publish to it
            "extra": {"engine_params": {"connect_args": {"read_only": True}}, "metadata_params": {},
                      "metadata_cache_timeout": {}, "schemas_allowed_for_csv_upload": []},
            "uuid": object_uuid("database", DATABASE), "version": "1.0.0"}


def bundle_files(uri: str) -> dict[str, dict]:
    chart_configs = charts()
    return {
        "metadata.yaml": {"version": "1.0.0", "type": "assets",
                          "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds")},
        f"databases/{DATABASE.replace(' ', '_')}.yaml": database(uri),
        "datasets/hindsight_marts/fct_metric_parts.yaml": parts_dataset(),
        "datasets/hindsight_marts/agg_metrics.yaml": _dataset(
            "agg_metrics", cell_metrics(), "The paper's cuts with their intervals: filter metric, visibility and "
                                           "prompt_variant; never average estimate over rows."),
        "datasets/hindsight_marts/agg_metrics_by_format.yaml": _dataset(
            "agg_metrics_by_format", cell_metrics(), "agg_metrics by question format and options type, with intervals."),
        "datasets/hindsight_marts/dim_build.yaml": _dataset("dim_build", [], "The build the published marts come from."),
        f"datasets/hindsight_marts/{INTERVALS}.yaml": interval_dataset(),
        **{f"charts/{name}.yaml": config for name, config in chart_configs.items()},
        "dashboards/hindsight_bias.yaml": dashboard(chart_configs),
    }


def write_bundle(serve: Path, out: Path, uri: str | None = None) -> Path:
    """OUT/hindsight_dashboard.zip, an assets bundle Superset 6.1 imports, for the serving file SERVE
    (at URI where Superset sees it elsewhere)."""
    files = bundle_files(uri or serving_uri(serve))
    out.mkdir(parents=True, exist_ok=True)
    bundle = out / f"{ROOT}.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(f"{ROOT}/{name}", yaml.safe_dump(content, sort_keys=False, allow_unicode=True))
    return bundle


def _login(client, user: str, password: str, wait: float):
    """Superset's reply to the login, once it answers (for up to WAIT seconds after it starts)."""
    import time

    import httpx

    deadline = time.monotonic() + wait
    while True:
        try:
            return client.post("/api/v1/security/login",
                               json={"username": user, "password": password, "provider": "db", "refresh": False})
        except httpx.TransportError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(1)


def import_bundle(bundle: Path, url: str, user: str, password: str, wait: float = 0, timeout: float = 120) -> str:
    """Import BUNDLE into the Superset at URL through its assets API (overwrites every object in
    place): log in (waiting up to WAIT seconds for a Superset still starting), take a CSRF token, post
    the bundle. Returns the dashboard's address."""
    import httpx

    base = url.rstrip("/")
    where = f"Superset at {base}"
    try:
        with httpx.Client(base_url=base, timeout=timeout) as client:
            login = _login(client, user, password, wait)
            if login.status_code != 200:
                raise InputError(where, f"login as {user!r} refused (HTTP {login.status_code})",
                                 "give an admin's user name (--user) and password (SUPERSET_PASSWORD or the prompt)")
            headers = {"Authorization": f"Bearer {login.json()['access_token']}", "Referer": base}
            token = client.get("/api/v1/security/csrf_token/", headers=headers)
            token.raise_for_status()
            headers["X-CSRFToken"] = token.json()["result"]
            with bundle.open("rb") as handle:
                done = client.post("/api/v1/assets/import/", headers=headers,
                                   files={"bundle": (bundle.name, handle, "application/zip")}, data={"passwords": "{}"})
    except httpx.TransportError as error:
        raise InputError(where, f"nothing answers there ({error})",
                         "start Superset (`superset run -p 8088`), give it time (--wait 60), or give its address with "
                         "--superset") from None
    if done.status_code != 200:
        body = done.text[:500].replace("\n", " ")
        raise InputError(where, f"the import was refused (HTTP {done.status_code}: {body})",
                         "import as an admin, into Superset 6.1 (`hindsight bi requirements` lists what it needs)")
    return f"{base}/superset/dashboard/{SLUG}/"
