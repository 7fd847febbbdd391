"""What the dbt project declares that Python reads too, and the warehouse's own settings.

Protocol settings: the `vars` of dbt_project.yml, the one home of every protocol constant.

SQL reads them with var(), the dbt Python models through their config, and Python
through protocol_vars(), so a change in dbt_project.yml (or `--vars` on a build)
reaches every model and command alike.

And the warehouse's release, __version__: the installed package's metadata (pyproject.toml's
`version`), recorded wherever a result leaves the warehouse (`hindsight --version`, the report's
footer, every export's manifest); dim_build records it through the var `warehouse_version`,
which a test keeps equal.

And ENVIRONMENT: every environment variable the warehouse reads, declared once with its default
and what it does. docs/reference/environment.md is generated from it, and a test fails when the
code, the macros or profiles.yml read a HINDSIGHT_ variable that is missing here
(tests/python/test_project_vars.py).

And the raw schema, declared once beside the sources it feeds (models/staging/raw/_raw__sources.yml),
from which every warehouse's raw tables are created (raw_ddl): each table's columns in order, with
`data_type`, and in `meta` whether a column is `not_null`, its `default`, and whether it was
`added_later` (a warehouse made before it gains it, at the end of its table). The judgment score
columns are dbt_project.yml's var judgment_score_columns, placed after the column a table's
`meta.judgment_scores_after` names (tests/python/test_raw_schema.py).
"""
from __future__ import annotations

from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, NamedTuple

import yaml

PACKAGE_DIR = Path(__file__).resolve().parent


def _project_dir() -> Path:
    """The dbt project: a checkout's root, beside the package; else the copy an installed package
    carries (ingest/dbt_project: setup.py and pyproject.toml's package-data put it there)."""
    if (PACKAGE_DIR.parent / "dbt_project.yml").is_file() and (PACKAGE_DIR.parent / "models").is_dir():
        return PACKAGE_DIR.parent
    return PACKAGE_DIR / "dbt_project"


PROJECT_DIR = _project_dir()
# a checkout (or an editable install of one) keeps dbt's target/ and logs/ and the default warehouse
# in its root, as a plain `dbt build` there does; an installed package writes beside the warehouse
IS_CHECKOUT = PROJECT_DIR == PACKAGE_DIR.parent
RAW_SOURCES = PROJECT_DIR / "models" / "staging" / "raw" / "_raw__sources.yml"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


try:
    __version__ = version("hindsight-warehouse")
except PackageNotFoundError:     # a checkout that was never installed
    __version__ = "0+unknown"


@lru_cache(maxsize=1)
def protocol_vars() -> dict[str, Any]:
    """The vars of dbt_project.yml, as declared (read once)."""
    with (PROJECT_DIR / "dbt_project.yml").open(encoding="utf-8") as handle:
        return dict(yaml.load(handle, Loader=_Loader)["vars"])


def protocol_var(name: str) -> Any:
    values = protocol_vars()
    if name not in values:
        raise KeyError(f"dbt_project.yml has no var {name!r}")
    return values[name]


class EnvironmentVariable(NamedTuple):
    default: str
    meaning: str


ENVIRONMENT = {
    # the warehouse and its readers
    "HINDSIGHT_DB": EnvironmentVariable(
        "warehouse.duckdb",
        "The warehouse file every command (and plain `dbt`) reads and writes; by default in a checkout's root, "
        "or in the working directory for an installed package."),
    "HINDSIGHT_MEMORY_LIMIT": EnvironmentVariable(
        "3GB",
        "DuckDB's memory limit for every connection of the warehouse."),
    "HINDSIGHT_TEMP_DIR": EnvironmentVariable(
        "DuckDB's, beside the file",
        "Where DuckDB spills what exceeds the memory limit."),
    "HINDSIGHT_LOCK_WAIT": EnvironmentVariable(
        "10",
        "Seconds a command (or plain `dbt`) waits for another writer of the warehouse before it names it and "
        "stops."),
    "HINDSIGHT_PUBLISH": EnvironmentVariable(
        "on",
        "`off` skips publishing the marts' snapshot at the end of a build; readers then use `--live`."),
    "HINDSIGHT_SERVE": EnvironmentVariable(
        "<warehouse>.marts.duckdb",
        "The serving file BI tools and `hindsight query` read; its snapshots are in `<serving "
        "stem>.snapshots/`."),
    "HINDSIGHT_SNAPSHOT_KEEP": EnvironmentVariable(
        "3",
        "How many published snapshots stay on disk (on Spark, snapshot databases), besides those a view still "
        "reads."),
    # asking models
    "HINDSIGHT_VLLM_BASE_URL": EnvironmentVariable(
        "http://localhost:8000/v1",
        "Where `vllm:MODEL` asks (`--base-url` overrides)."),
    "HINDSIGHT_OLLAMA_BASE_URL": EnvironmentVariable(
        "http://localhost:11434/v1",
        "Where `ollama:MODEL` asks (`--base-url` overrides)."),
    "HINDSIGHT_LLAMACPP_BASE_URL": EnvironmentVariable(
        "http://localhost:8080/v1",
        "Where `llamacpp:MODEL` asks (`--base-url` overrides)."),
    "HINDSIGHT_CLAIM_SECONDS": EnvironmentVariable(
        "60",
        "How long a run's claim on a call lasts without its heartbeat (a run beats every quarter of it): a "
        "crashed run's calls are resumed by another run after this."),
    "HINDSIGHT_BATCH_COMMIT_EVERY": EnvironmentVariable(
        "500",
        "Batch results stored per transaction when a batch is collected."),
    "HINDSIGHT_BATCH_CRASH": EnvironmentVariable(
        "",
        "For tests: the batch step at which the process kills itself, to prove a collection resumes."),
    # Spark
    "HINDSIGHT_LANDING": EnvironmentVariable(
        "landing/ beside the warehouse",
        "The Parquet landing zone `hindsight export raw` writes and the Spark target reads the raw tables "
        "from."),
    "HINDSIGHT_SPARK_MASTER": EnvironmentVariable(
        "local[2]",
        "A standalone Spark master (`spark://host:7077`) for `hindsight build --target spark`."),
    "HINDSIGHT_SPARK_REMOTE": EnvironmentVariable(
        "",
        "A Spark Connect server (`sc://host:15002`): the build runs there (profiles.yml output "
        "`spark_connect`)."),
    "HINDSIGHT_SPARK_WAREHOUSE": EnvironmentVariable(
        "<warehouse>.spark",
        "The in-process Spark catalog's folder (Hive metastore and Parquet tables)."),
    "HINDSIGHT_SPARK_MEMORY": EnvironmentVariable(
        "4g",
        "The in-process Spark driver's heap (its executors run in it)."),
    "HINDSIGHT_SPARK_SHUFFLE_PARTITIONS": EnvironmentVariable(
        "16",
        "Spark's shuffle partitions before adaptive execution merges small ones."),
    "HINDSIGHT_SPARK_SCOPE": EnvironmentVariable(
        "",
        "Set by `hindsight build --target spark` for its dbt process: the planned selection."),
    # the test suite (`make test`; .ci/run sets them, turning a skip into a failure)
    "HINDSIGHT_REQUIRE_DATA": EnvironmentVariable(
        "",
        "`1`: tests that need ../shared/data fail instead of skipping."),
    "HINDSIGHT_REQUIRE_SPARK": EnvironmentVariable(
        "",
        "`1`: the Spark tests fail instead of skipping without pyspark or Java."),
    "HINDSIGHT_REQUIRE_INTEROP": EnvironmentVariable(
        "",
        "`1`: the Inspect AI and Every Eval Ever tests fail instead of skipping."),
    "HINDSIGHT_REQUIRE_LOCAL_LLM": EnvironmentVariable(
        "",
        "`1`: the llama.cpp server tests fail instead of skipping."),
    "HINDSIGHT_REQUIRE_BROWSER": EnvironmentVariable(
        "",
        "`1`: the report's browser tests fail instead of skipping."),
    "HINDSIGHT_WRITE_SCREENSHOTS": EnvironmentVariable(
        "",
        "`1`: the browser tests (the explorer's, the Superset dashboard's) write their screenshots into docs/img."),
}


def judgment_score_columns() -> list[tuple[str, str]]:
    """A judgment's score columns and their types, declared once: dbt_project.yml's var
    judgment_score_columns, which the staging models and int_judgments read too."""
    return [(name, dtype) for name, dtype in protocol_vars()["judgment_score_columns"]]


@lru_cache(maxsize=1)
def raw_tables() -> dict[str, dict]:
    """Each raw table's entry of the sources YAML, its columns complete (the score columns placed)."""
    with RAW_SOURCES.open(encoding="utf-8") as handle:
        source = next(s for s in yaml.load(handle, Loader=_Loader)["sources"] if s["name"] == "raw")
    tables = {}
    for table in source["tables"]:
        columns = list(table["columns"])
        after = (table.get("meta") or {}).get("judgment_scores_after")
        if after:
            at = next(i for i, column in enumerate(columns) if column["name"] == after) + 1
            # a warehouse made before a score existed gains its column (at the end: the staging
            # models select by name)
            columns[at:at] = [{"name": name, "data_type": dtype, "meta": {"added_later": True}}
                              for name, dtype in judgment_score_columns()]
        tables[table["name"]] = {**table, "columns": columns}
    return tables


def build_ledgers() -> list[str]:
    """The raw tables that are build ledgers, not data (`exported: false`): no landing zone, signature or Spark view."""
    return [name for name, table in raw_tables().items() if (table.get("meta") or {}).get("exported") is False]


def _column_sql(column: dict) -> str:
    meta = column.get("meta") or {}
    return " ".join([f"{column['name']:<20}", column["data_type"], *(["not null"] if meta.get("not_null") else []),
                     *([f"default {meta['default']}"] if "default" in meta else [])])


@lru_cache(maxsize=1)
def raw_ddl() -> str:
    """The statements that create the raw schema in a new warehouse (every column, in the YAML's order: a
    later column is declared where a new table has it) and add the later columns to an older one."""
    statements = ["create schema if not exists raw;"]
    for name, table in raw_tables().items():
        body = ",\n".join(f"    {_column_sql(c)}" for c in table["columns"])
        statements.append(f"create table if not exists raw.{name} (\n{body}\n);")
        statements += [f"alter table raw.{name} add column if not exists {_column_sql(c)};"
                       for c in table["columns"] if (c.get("meta") or {}).get("added_later")]
    return "\n".join(statements) + "\n"
