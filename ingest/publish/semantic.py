"""The semantic layer as the project declares it (models/marts/metrics/_metrics__models.yml, MetricFlow's
specification): the paper's metrics, what each is a ratio of, and the dimensions any slice can be cut
by. `hindsight metrics`, the BI expressions of the metrics reference and the Superset bundle read
these declarations; nothing here restates them.

A paper metric is a ratio metric over fct_metric_parts: sum(numerator column) / sum(denominator
column), with its validity rate the ratio of its valid questions to its questions, and the
visibilities it has (`meta.visibilities`: full|masked for Acc and HTR, paired for the others).
A dimension is named as MetricFlow names it: an entity of the parts (`model`, `condition`, `case`,
`question`), or `<entity>__<dimension>` (`question__relpos_band`, `case__cohort`,
`answer__prompt_variant`); a dimension's bare name (`relpos_band`) is accepted where it is unique.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
import yaml
from sqlglot import exp

from ingest.errors import InputError
from ingest.publish.marts import LOADER, MARTS_DIR

PARTS_MODEL = "metric_parts"       # the semantic model whose measures the metrics read
REF = re.compile(r"ref\('(?P<name>[^']+)'\)")


@dataclass(frozen=True)
class Metric:
    name: str
    label: str
    description: str
    numerator: str           # fct_metric_parts columns
    denominator: str
    valid: str | None        # the column of valid questions (its validity rate's numerator), if declared
    visibilities: tuple[str, ...]
    reads: str = ""          # how to read it, with its sign convention (meta.reads), for wherever it is shown

    def bi_expression(self, table: str | None = None) -> str:
        """The metric as one aggregate SQL expression over fct_metric_parts rows: exact for any roll-up."""
        prefix = f"{table}." if table else ""
        return f"sum({prefix}{self.numerator}) / nullif(sum({prefix}{self.denominator}), 0)"


@dataclass(frozen=True)
class Dimension:
    name: str                # MetricFlow's name: the entity, or entity__dimension
    short: str               # the bare name
    relation: str            # the mart it is read from
    alias: str               # that relation's alias in a slice's query (its primary entity)
    expr: str                # SQL over that relation's columns
    description: str
    label: str = ""          # in words, for a page or a file's header ("Prompt variant")


@dataclass(frozen=True)
class Join:
    relation: str
    alias: str
    on: str                  # SQL: fact alias `answer` joined to ALIAS


@dataclass(frozen=True)
class SemanticLayer:
    parts: str               # fct_metric_parts
    parts_alias: str         # its primary entity: `answer`
    metrics: dict[str, Metric]
    dimensions: dict[str, Dimension]
    joins: dict[str, Join]   # by alias

    def metric(self, name: str) -> Metric:
        if name not in self.metrics:
            raise InputError("--metric", f"unknown metric {name!r}", f"use one of {', '.join(self.metrics)}")
        return self.metrics[name]

    def dimension(self, name: str) -> Dimension:
        if name in self.dimensions:
            return self.dimensions[name]
        matches = [d for d in self.dimensions.values() if d.short == name]
        if len(matches) == 1:
            return matches[0]
        listed = ", ".join(sorted(self.dimensions))
        if matches:
            raise InputError("--by", f"{name!r} is ambiguous ({', '.join(d.name for d in matches)})", f"use one of {listed}")
        raise InputError("--by", f"unknown dimension {name!r}", f"use one of {listed}")


def _declarations() -> tuple[list[dict], list[dict]]:
    semantic_models, metrics = [], []
    for path in sorted(MARTS_DIR.rglob("*.yml")):
        properties = yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER) or {}
        semantic_models += properties.get("semantic_models") or []
        metrics += properties.get("metrics") or []
    return semantic_models, metrics


def _relation(model: dict) -> str:
    return REF.search(model["model"])["name"]


def _primary(model: dict) -> dict | None:
    return next((e for e in model.get("entities", []) if e["type"] == "primary"), None)


@lru_cache(maxsize=1)
def semantic_layer() -> SemanticLayer:
    models, declared = _declarations()
    by_name = {m["name"]: m for m in models}
    parts = by_name[PARTS_MODEL]
    parts_alias = _primary(parts)["name"]
    measures = {m["name"]: m.get("expr") or m["name"] for m in parts.get("measures", [])}
    simple = {m["name"]: measures[m["type_params"]["measure"]] for m in declared if m["type"] == "simple"}
    ratios = {m["name"]: m for m in declared if m["type"] == "ratio"}

    metrics = {}
    for metric in declared:
        meta = metric.get("meta") or {}
        visibilities = meta.get("visibilities")
        if metric["type"] != "ratio" or not visibilities:
            continue                     # the parts and validity rates: building blocks, not the paper's metrics
        params = metric["type_params"]
        validity = ratios.get(f"{metric['name']}_validity_rate")
        metrics[metric["name"]] = Metric(
            metric["name"], metric.get("label", metric["name"]), metric.get("description", ""),
            simple[params["numerator"]], simple[params["denominator"]],
            simple[validity["type_params"]["numerator"]] if validity else None, tuple(visibilities.split("|")),
            meta.get("reads", ""))

    dimensions, joins = {}, {}
    entities = [e for e in parts.get("entities", []) if e["type"] == "foreign"]
    foreign = {e["name"]: e.get("expr") or e["name"] for e in entities}
    for entity in entities:                     # an entity is a dimension of its own (MetricFlow groups by it)
        name = entity["name"]
        dimensions[name] = Dimension(name, name, _relation(parts), parts_alias, foreign[name], f"The {name} (an entity).",
                                     entity.get("label") or name)
    for model in models:
        primary = _primary(model)
        if model is parts:
            alias = parts_alias
        elif primary and primary["name"] in foreign:
            alias = primary["name"]
            joins[alias] = Join(_relation(model), alias,
                                f"{_qualified(alias, primary.get('expr') or primary['name'])} = "
                                f"{_qualified(parts_alias, foreign[alias])}")
        else:
            continue
        for dimension in model.get("dimensions", []):
            if dimension["type"] != "categorical":
                continue                 # the time dimension is the measures' aggregation time only
            name = f"{alias}__{dimension['name']}"
            dimensions[name] = Dimension(name, dimension["name"], _relation(model), alias,
                                         dimension.get("expr") or dimension["name"], dimension.get("description", ""),
                                         dimension.get("label") or dimension["name"].replace("_", " ").capitalize())
    return SemanticLayer(_relation(parts), parts_alias, metrics, dimensions, joins)


def _qualified(alias: str, expr: str) -> str:
    """EXPR (a semantic model's column expression) with its bare column names qualified by ALIAS."""
    tree = sqlglot.parse_one(expr, read="duckdb")
    for column in tree.find_all(exp.Column):
        if not column.table:
            column.set("table", exp.to_identifier(alias, quoted=True))     # `case` is a keyword
    return tree.sql(dialect="duckdb")


def dimension_sql(dimension: Dimension) -> str:
    return _qualified(dimension.alias, dimension.expr)
