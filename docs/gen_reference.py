"""Generates the marts reference from the dbt YAML, the metrics and dimensions reference from the semantic
layer declared there, the dbt vars reference from dbt_project.yml, the
environment reference from ingest/config.py, the seeds reference from seeds/ and the raw schema from
the DDL that creates it (ingest/db.py) and the sources YAML, at every `mkdocs build` (mkdocs-gen-files).

Nothing here is written by hand: a mart, column, description or test added to models/marts/ appears
in the docs without anyone remembering to document it.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import mkdocs_gen_files
import yaml

from ingest.config import ENVIRONMENT, raw_tables
from ingest.publish.marts import public_mart_properties, singular_tests_of
from ingest.publish.project_vars import project_vars
from ingest.publish.semantic import dimension_sql, semantic_layer

FOLDERS = {
    "core": "Cases, questions, TTS events and the build",
    "requests": "Requests: what the runners ask",
    "scores": "Scored answers and pairs",
    "metrics": "Metrics with case-clustered bootstrap intervals",
    "quality": "Data quality and coverage",
    "validation": "Human validation (Appendix G)",
    "hindsightbench": "HindsightBench audit",
}


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def _test_name(test) -> str:
    if isinstance(test, str):
        return test
    name, spec = next(iter(test.items()))
    arguments = (spec or {}).get("arguments", spec or {})
    detail = ", ".join(f"{k}: {v}" for k, v in arguments.items() if k not in ("config", "severity")) if isinstance(arguments, dict) else ""
    return f"{name} ({detail})" if detail else name


def _column_checks(column: dict) -> str:
    checks = [c["type"] for c in column.get("constraints") or []]
    checks += [_test_name(t) for t in column.get("data_tests") or column.get("tests") or []]
    return ", ".join(f"`{c}`" for c in checks)


def render() -> str:
    marts = public_mart_properties()
    lines = ["# Marts reference", "",
             "Generated from the dbt properties in `models/marts/` at every docs build. Every mart below is "
             "`access: public` with an enforced contract (column names, order and types), lives in the default "
             "schema `main`, and keeps its name and columns across releases (a change is a breaking entry in the "
             "[changelog](../changelog.md)).", ""]
    for folder, title in FOLDERS.items():
        names = [m["name"] for m in marts if m["folder"] == folder]
        if names:
            lines.append(f"- **{title}**: " + ", ".join(f"[`{n}`](#{n})" for n in names))
    lines.append("")
    for mart in marts:
        config = mart.get("config") or {}
        lines += [f"## {mart['name']}", "",
                  f"**Grain:** {(config.get('meta') or {}).get('grain', '')} · **folder:** `models/marts/{mart['folder']}/` · "
                  f"**materialized:** {config.get('materialized', 'table (project default)')}", "",
                  _one_line(mart.get("description")), ""]
        model_tests = [_test_name(t) for t in mart.get("data_tests") or mart.get("tests") or []]
        if model_tests:
            lines += ["**Data tests:** " + "; ".join(f"`{t}`" for t in model_tests), ""]
        if mart["unit_tests"]:
            lines += ["**Unit tests:** " + ", ".join(f"`{t}`" for t in mart["unit_tests"]), ""]
        singular = singular_tests_of(mart["name"])
        if singular:
            lines += ["**Singular tests:** " + ", ".join(f"`{t}`" for t in singular), ""]
        lines += ["| column | type | description | checks |", "| --- | --- | --- | --- |"]
        for column in mart.get("columns", []):
            lines.append(f"| `{column['name']}` | {column.get('data_type', '')} | {_one_line(column.get('description'))} "
                         f"| {_column_checks(column)} |")
        lines.append("")
    return "\n".join(lines)


def render_vars() -> str:
    lines = ["# dbt vars reference", "",
             "Generated from `dbt_project.yml` at every docs build: each var, its default, what it means (the "
             "comment above it there, the one place it is written) and what reads it. Set one for a build with "
             "`hindsight build --vars '{\"ci_method\": \"bca\"}'` (or `dbt build --vars …`); the build records "
             "the settings that shape the marts in `dim_build`.", "",
             "| var | default | meaning | read by |", "| --- | --- | --- | --- |"]
    for var in project_vars():
        default = json.dumps(var.default) if isinstance(var.default, (dict, list)) else str(var.default)
        lines.append(f"| `{var.name}` | `{_one_line(default)}` | {_one_line(var.meaning)} | "
                     + ", ".join(f"`{r}`" for r in var.readers) + " |")
    return "\n".join(lines) + "\n"


def render_environment() -> str:
    lines = ["# Environment variables", "",
             "Generated from `ingest/config.py`, where every variable the warehouse reads is declared once "
             "(a test fails when the code reads one that is not there).", "",
             "| variable | default | what it does |", "| --- | --- | --- |"]
    for name, variable in ENVIRONMENT.items():
        default = f"`{variable.default}`" if variable.default else "(unset)"
        lines.append(f"| `{name}` | {default} | {_one_line(variable.meaning)} |")
    return "\n".join(lines) + "\n"


PROJECT = Path(__file__).resolve().parents[1]


def render_seeds() -> str:
    """Each seed: what it is, its columns (the YAML's descriptions) and rows, from seeds/."""
    seeds = yaml.safe_load((PROJECT / "seeds" / "_seeds.yml").read_text())["seeds"]
    lines = ["# Seeds reference", "",
             "Generated from `seeds/` at every docs build: the project's reference tables, versioned with the code "
             "and loaded by every build (`dbt seed`). Edit the CSV to change one; its YAML entry (`seeds/_seeds.yml`) "
             "says what each column means and holds the tests that guard it.", ""]
    lines += [f"- [`{seed['name']}`](#{seed['name']})" for seed in sorted(seeds, key=lambda seed: seed["name"])] + [""]
    for seed in sorted(seeds, key=lambda seed: seed["name"]):
        with (PROJECT / "seeds" / f"{seed['name']}.csv").open(newline="") as handle:
            header, *rows = list(csv.reader(handle))
        described = {column["name"]: column for column in seed.get("columns") or []}
        types = (seed.get("config") or {}).get("column_types") or {}
        lines += [f"## {seed['name']}", "", f"`seeds/{seed['name']}.csv`, {len(rows)} rows.", "",
                  _one_line(seed.get("description")), "",
                  "| column | type | description | checks |", "| --- | --- | --- | --- |"]
        for name in header:
            column = described.get(name, {})
            lines.append(f"| `{name}` | {types.get(name, '')} | {_one_line(column.get('description'))} | {_column_checks(column)} |")
        lines.append("")
    return "\n".join(lines)


def render_raw() -> str:
    """Each raw table: what it holds and its columns, as the sources YAML declares them (every warehouse's
    raw tables are created from it: ingest/config.py)."""
    lines = ["# Raw schema reference", "",
             "Generated at every docs build from the declaration every warehouse's `raw` schema is created from "
             "(`models/staging/raw/_raw__sources.yml`, read by `ingest/config.py`). The raw tables are "
             "append-only: the `hindsight` commands write them (each row with the `load_id` of the command that "
             "wrote it), and the staging models are the only readers. What each input file must hold is in "
             "[Bring your own data](../your-data.md).", ""]
    tables = raw_tables()
    lines += ["- " + ", ".join(f"[`{name}`](#{name})" for name in sorted(tables)), ""]
    for name, table in sorted(tables.items()):
        lines += [f"## {name}", "", _one_line(table.get("description")), "",
                  "| column | type | description |", "| --- | --- | --- |"]
        for column in table["columns"]:
            meta = column.get("meta") or {}
            kind = column["data_type"] + (" not null" if meta.get("not_null") else "") + (
                f" default {meta['default']}" if "default" in meta else "")
            lines.append(f"| `{column['name']}` | {kind} | {_one_line(column.get('description'))} |")
        lines.append("")
    return "\n".join(lines)


def render_metrics() -> str:
    layer = semantic_layer()
    lines = ["# Metrics and dimensions reference", "",
             "Generated from the semantic layer declared in `models/marts/metrics/_metrics__models.yml` (MetricFlow's "
             "specification) at every docs build. `hindsight metrics`, `mf query`, the Superset bundle and the BI "
             "expressions below read these declarations; [Slice the metrics any way](../slicing.md) shows them in use.", "",
             "## Metrics", "",
             "Each metric is a ratio of summed parts of `fct_metric_parts` (one row per question x answer cell). The "
             "expression is exact for any roll-up in a BI tool; an average of `agg_metrics.estimate` over rows is not. "
             "Acc and HTR have a full and a masked value: group or filter `visibility`; every metric: group or filter "
             "`prompt_variant`.", "",
             "| metric | label | visibilities | BI expression over `fct_metric_parts` | validity rate | definition |",
             "|---|---|---|---|---|---|"]
    for metric in layer.metrics.values():
        validity = f"`sum({metric.valid}) / nullif(sum({metric.denominator}), 0)`" if metric.valid else ""
        lines.append(f"| `{metric.name}` | {_one_line(metric.label)} | {'|'.join(metric.visibilities).replace('|', ', ')} | "
                     f"`{metric.bi_expression()}` | {validity} | {_one_line(metric.description)} |")
    lines += ["", "## Dimensions", "",
              "Name them in `hindsight metrics --by` and `mf query --group-by` as below; `hindsight metrics` also takes "
              "the part after `__` where it is unique (`relpos_band`). An entity (`model`, `condition`, `case`, "
              "`question`) is a dimension of its own.", "",
              "| dimension | from | SQL | description |", "|---|---|---|---|"]
    for dimension in layer.dimensions.values():
        lines.append(f"| `{dimension.name}` | `{dimension.relation}` | `{_one_line(dimension_sql(dimension))}` | "
                     f"{_one_line(dimension.description)} |")
    return "\n".join(lines) + "\n"


with mkdocs_gen_files.open("reference/metrics.md", "w") as handle:
    handle.write(render_metrics())
with mkdocs_gen_files.open("reference/seeds.md", "w") as handle:
    handle.write(render_seeds())
with mkdocs_gen_files.open("reference/raw.md", "w") as handle:
    handle.write(render_raw())
with mkdocs_gen_files.open("reference/marts.md", "w") as handle:
    handle.write(render())
with mkdocs_gen_files.open("reference/vars.md", "w") as handle:
    handle.write(render_vars())
with mkdocs_gen_files.open("reference/environment.md", "w") as handle:
    handle.write(render_environment())
