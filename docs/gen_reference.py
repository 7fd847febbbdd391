"""Generates the marts reference from the dbt YAML, the dbt vars reference from dbt_project.yml and
the environment reference from ingest/config.py, at every `mkdocs build` (mkdocs-gen-files).

Nothing here is written by hand: a mart, column, description or test added to models/marts/ appears
in the docs without anyone remembering to document it.
"""
from __future__ import annotations

import json

import mkdocs_gen_files

from ingest.config import ENVIRONMENT
from ingest.publish.marts import public_mart_properties, singular_tests_of
from ingest.publish.project_vars import project_vars

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


with mkdocs_gen_files.open("reference/marts.md", "w") as handle:
    handle.write(render())
with mkdocs_gen_files.open("reference/vars.md", "w") as handle:
    handle.write(render_vars())
with mkdocs_gen_files.open("reference/environment.md", "w") as handle:
    handle.write(render_environment())
