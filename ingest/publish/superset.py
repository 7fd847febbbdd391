"""A dashboard bundle Apache Superset (6.1) imports: `hindsight bi superset --out DIR`.

The bundle (Superset's import format v1: metadata.yaml, databases/, datasets/, charts/,
dashboards/, zipped under one folder) holds
- the serving file as a read-only DuckDB database;
- two datasets: fct_metric_parts, whose Superset metrics are the semantic layer's metrics as
  aggregate SQL (ingest/publish/semantic.py: sum of the numerator over sum of the denominator, exact
  for any roll-up), and agg_metrics, the paper's cuts with their intervals;
- three charts a reader of the paper expects, each grouping or filtering prompt_variant: ΔHTR by
  model x condition with its interval, Acc by format, ΔHTR by RelPos band.
Every object has a fixed UUID (uuid5 of its name), so importing a newer bundle updates it in place.
`superset import-dashboards -p DIR/hindsight_dashboard.zip -u ADMIN`, or the dashboard import API.
"""
from __future__ import annotations

import json
import uuid
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import yaml

from ingest.publish.marts import public_mart_properties
from ingest.publish.semantic import semantic_layer

NAMESPACE = uuid.UUID("5d0c1f3e-7a0b-4f5e-9d62-68a1c3b9e0a4")
ROOT = "hindsight_dashboard"
DATABASE = "hindsight marts"
SUPERSET_TYPES = {"string": "VARCHAR", "double": "DOUBLE", "integer": "INTEGER", "bigint": "BIGINT",
                  "boolean": "BOOLEAN", "timestamp": "TIMESTAMP", "date": "DATE"}
ROW_LIMIT = 10000


def object_uuid(kind: str, name: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{kind}:{name}"))


def _columns(mart: str) -> list[dict]:
    properties = next(m for m in public_mart_properties() if m["name"] == mart)
    return [{"column_name": c["name"], "type": SUPERSET_TYPES.get(c.get("data_type", "string"), "VARCHAR"),
             "is_dttm": c.get("data_type") == "timestamp", "groupby": True, "filterable": True,
             "description": c.get("description"), "expression": None, "verbose_name": None, "is_active": True}
            for c in properties.get("columns", [])]


def _dataset(mart: str, metrics: list[dict], description: str) -> dict:
    return {"table_name": mart, "schema": "main", "main_dttm_col": None, "description": description, "sql": None,
            "params": None, "template_params": None, "filter_select_enabled": True, "extra": None, "cache_timeout": None,
            "uuid": object_uuid("dataset", mart), "database_uuid": object_uuid("database", DATABASE), "version": "1.0.0",
            "columns": _columns(mart), "metrics": metrics, "offset": 0, "normalize_columns": False}


def parts_metrics() -> list[dict]:
    """The semantic layer's metrics as Superset metrics of the fct_metric_parts dataset."""
    out = []
    for metric in semantic_layer().metrics.values():
        out.append({"metric_name": metric.name, "verbose_name": metric.label, "expression": metric.bi_expression(),
                    "description": f"{metric.description} ({'|'.join(metric.visibilities)}; a ratio of summed parts: exact "
                                   "for any roll-up)", "d3format": ".3f", "metric_type": None, "warning_text": None, "extra": None})
        out.append({"metric_name": f"{metric.name}_n_questions", "verbose_name": f"{metric.label}: questions",
                    "expression": f"sum({metric.denominator})", "description": "Questions with a value (n_questions).",
                    "d3format": ",d", "metric_type": None, "warning_text": None, "extra": None})
        if metric.valid:
            out.append({"metric_name": f"{metric.name}_validity_rate", "verbose_name": f"{metric.label}: validity rate",
                        "expression": f"sum({metric.valid}) / nullif(sum({metric.denominator}), 0)",
                        "description": "Share of those questions whose every sample is valid.", "d3format": ".2f",
                        "metric_type": None, "warning_text": None, "extra": None})
    return out


def _filter(column: str, values: list[str]) -> tuple[dict, dict]:
    """(the chart's adhoc filter, its query-context filter)."""
    operator = "==" if len(values) == 1 else "IN"
    adhoc = {"clause": "WHERE", "expressionType": "SIMPLE", "subject": column, "operator": operator,
             "comparator": values[0] if len(values) == 1 else values, "isExtra": False}
    return adhoc, {"col": column, "op": operator, "val": values[0] if len(values) == 1 else values}


def _chart(name: str, title: str, dataset: str, description: str, filters: list[tuple[str, list[str]]],
           columns: list[str], metrics: list[str] | None) -> dict:
    """A table chart: raw rows (metrics None) or one row per group with the dataset's saved metrics."""
    adhoc, query_filters = zip(*(_filter(c, v) for c, v in filters)) if filters else ((), ())
    params = {"viz_type": "table", "datasource": "0__table", "adhoc_filters": list(adhoc), "row_limit": ROW_LIMIT,
              "order_desc": False, "table_timestamp_format": "smart_date", "include_search": True,
              "server_pagination": False, "show_cell_bars": False, "color_pn": True}
    if metrics is None:
        params.update(query_mode="raw", all_columns=columns, order_by_cols=[json.dumps([c, True]) for c in columns[:4]])
        query = {"columns": columns, "metrics": [], "orderby": [[c, True] for c in columns[:4]]}
    else:
        params.update(query_mode="aggregate", groupby=columns, metrics=metrics, all_columns=[], percent_metrics=[])
        query = {"columns": columns, "metrics": metrics, "orderby": [[c, True] for c in columns]}
    query.update(filters=list(query_filters), row_limit=ROW_LIMIT, extras={"having": "", "where": ""},
                 annotation_layers=[], applied_time_extras={}, custom_form_data={}, custom_params={}, url_params={})
    context = {"datasource": {"id": 0, "type": "table"}, "force": False, "queries": [query], "form_data": params,
               "result_format": "json", "result_type": "full"}
    return {"slice_name": title, "description": description, "viz_type": "table", "params": params,
            "query_context": json.dumps(context), "cache_timeout": None, "uuid": object_uuid("chart", name),
            "version": "1.0.0", "dataset_uuid": object_uuid("dataset", dataset), "certified_by": None,
            "certification_details": None}


def charts() -> dict[str, dict]:
    return {
        "delta_htr_interval": _chart(
            "delta_htr_interval", "ΔHTR by model × condition, with its 95% interval", "agg_metrics",
            "agg_metrics: the case-clustered bootstrap interval of each cell (one row per cohort, model, condition and "
            "prompt variant; never average these estimates).",
            [("metric", ["delta_htr"]), ("visibility", ["paired"])],
            ["cohort", "model", "condition", "prompt_variant", "estimate", "ci_low", "ci_high", "significant", "n_cases"], None),
        "acc_by_format": _chart(
            "acc_by_format", "Acc by format", "fct_metric_parts",
            "Accuracy per model, question format, prompt variant and visibility, summed from fct_metric_parts (cohorts "
            "pooled); `hindsight metrics --metric acc --by model,format` gives each cell its interval.",
            [("visibility", ["full", "masked"])], ["model", "format", "prompt_variant", "visibility"], ["acc", "acc_n_questions"]),
        "delta_htr_by_relpos_band": _chart(
            "delta_htr_by_relpos_band", "ΔHTR by RelPos band", "fct_metric_parts",
            "Is hindsight bias larger when the cutoff falls early? ΔHTR per model, RelPos band and prompt variant (cohorts "
            "pooled); `hindsight metrics --metric delta_htr --by model,relpos_band` gives the intervals.",
            [("visibility", ["paired"])], ["model", "relpos_band", "prompt_variant"], ["delta_htr", "delta_htr_n_questions"]),
    }


NOTE = ("**Hindsight bias: slices of the paper's metrics.** Every estimate here is a ratio of summed parts "
        "(`fct_metric_parts`): a roll-up of it is exact, an average of estimates is not. The charts keep "
        "`prompt_variant` apart; filter or group it in any chart you add. Intervals for any slice: "
        "`hindsight metrics --metric delta_htr --by model,relpos_band`.")


def dashboard(chart_configs: dict[str, dict]) -> dict:
    position = {"DASHBOARD_VERSION_KEY": "v2",
                "ROOT_ID": {"type": "ROOT", "id": "ROOT_ID", "children": ["GRID_ID"]},
                "GRID_ID": {"type": "GRID", "id": "GRID_ID", "children": ["ROW-note", "ROW-interval", "ROW-slices"],
                            "parents": ["ROOT_ID"]},
                "HEADER_ID": {"id": "HEADER_ID", "type": "HEADER", "meta": {"text": "Hindsight bias"}}}
    rows = {"ROW-note": ["MARKDOWN-note"], "ROW-interval": ["CHART-delta_htr_interval"],
            "ROW-slices": ["CHART-acc_by_format", "CHART-delta_htr_by_relpos_band"]}
    for row, children in rows.items():
        position[row] = {"type": "ROW", "id": row, "children": children, "parents": ["ROOT_ID", "GRID_ID"],
                         "meta": {"background": "BACKGROUND_TRANSPARENT"}}
    position["MARKDOWN-note"] = {"type": "MARKDOWN", "id": "MARKDOWN-note", "children": [],
                                 "parents": ["ROOT_ID", "GRID_ID", "ROW-note"], "meta": {"width": 12, "height": 20, "code": NOTE}}
    for name, config in chart_configs.items():
        row = next(r for r, children in rows.items() if f"CHART-{name}" in children)
        position[f"CHART-{name}"] = {"type": "CHART", "id": f"CHART-{name}", "children": [],
                                     "parents": ["ROOT_ID", "GRID_ID", row],
                                     "meta": {"uuid": config["uuid"], "chartId": 0, "sliceName": config["slice_name"],
                                              "width": 12 if row == "ROW-interval" else 6, "height": 60}}
    return {"dashboard_title": "Hindsight bias", "description": None, "css": "", "slug": "hindsight-bias",
            "uuid": object_uuid("dashboard", "hindsight bias"), "position": position, "published": True, "version": "1.0.0",
            "metadata": {"color_scheme": "", "refresh_frequency": 0, "expanded_slices": {}, "label_colors": {},
                         "timed_refresh_immune_slices": [], "default_filters": "{}", "chart_configuration": {},
                         "native_filter_configuration": [], "cross_filters_enabled": False},
            "certified_by": None, "certification_details": None}


def database(serve: Path) -> dict:
    return {"database_name": DATABASE, "sqlalchemy_uri": f"duckdb:///{serve.resolve()}", "cache_timeout": None,
            "expose_in_sqllab": True, "allow_run_async": False, "allow_ctas": False, "allow_cvas": False, "allow_dml": False,
            "allow_csv_upload": False, "impersonate_user": False,
            # read-only: the serving file is never locked against the builds that publish to it
            "extra": {"engine_params": {"connect_args": {"read_only": True}}, "metadata_params": {},
                      "metadata_cache_timeout": {}, "schemas_allowed_for_csv_upload": []},
            "uuid": object_uuid("database", DATABASE), "version": "1.0.0"}


def write_bundle(serve: Path, out: Path) -> Path:
    """OUT/hindsight_dashboard.zip, importable by Superset 6.1, for the serving file SERVE."""
    chart_configs = charts()
    files = {
        "metadata.yaml": {"version": "1.0.0", "type": "Dashboard",
                          "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds")},
        f"databases/{DATABASE.replace(' ', '_')}.yaml": database(serve),
        "datasets/hindsight_marts/fct_metric_parts.yaml": _dataset(
            "fct_metric_parts", parts_metrics(),
            "The additive parts of every metric: its Superset metrics sum them (exact for any roll-up)."),
        "datasets/hindsight_marts/agg_metrics.yaml": _dataset(
            "agg_metrics", [], "The paper's cuts with their intervals: filter metric, visibility and prompt_variant; "
                               "never average estimate over rows."),
        **{f"charts/{name}.yaml": config for name, config in chart_configs.items()},
        "dashboards/hindsight_bias.yaml": dashboard(chart_configs),
    }
    out.mkdir(parents=True, exist_ok=True)
    bundle = out / f"{ROOT}.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(f"{ROOT}/{name}", yaml.safe_dump(content, sort_keys=False, allow_unicode=True))
    return bundle
