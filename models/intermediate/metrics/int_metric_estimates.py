"""One row per metric cell at two groupings: `format` (cohort x model x
condition x prompt_variant x metric x visibility x format x options_type)
and `overall` (without format and options_type), with the case-clustered
bootstrap CI and the other statistics of ingest/stats/metric_estimates.py.
Overall cells are sums of format cells: one matrix product per cohort serves both.
The incremental pattern: docs/architecture.md#the-incremental-pattern.
"""
from ingest.stats.metric_estimates import CELL, estimates


def model(dbt, session):
    # incremental: only the answer cells whose case sums changed are estimated again. dbt reads the
    # frame's strings as varchar(256) and the table's as varchar, so its schema check would always
    # fail: a table of an older shape is rebuilt by `hindsight build` (ingest/build.py) instead
    dbt.config(materialized="incremental", incremental_strategy="delete+insert", on_schema_change="ignore",
               unique_key=["cohort", "model", "condition", "prompt_variant", "visibility"])
    sums = f"({dbt.ref('int_metric_case_sums').sql_query()})"
    cells = f"({dbt.ref('int_metric_cells').sql_query()})"
    cases = f"({dbt.ref('int_bootstrap_cases').sql_query()})"
    return estimates(session, sums, cells, cases, int(dbt.config.get("bootstrap_replicates")),
                     int(dbt.config.get("bootstrap_seed")),
                     method=str(dbt.config.get("ci_method")), this=str(dbt.this) if dbt.is_incremental else None,
                     leaf="format", slices=["format", "options_type"], rollups={"overall": CELL})
