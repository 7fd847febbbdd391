"""One row per metric cell at grouping `eval_target` (cohort x model x
condition x prompt_variant x metric x visibility x eval_target), with the
same estimator and the same bootstrap draws as int_metric_estimates
(ingest/stats/metric_estimates.py), from its own pass over the case sums.
The incremental pattern: docs/architecture.md#the-incremental-pattern.
"""
from ingest.stats.metric_estimates import estimates


def model(dbt, session):
    # incremental: only the answer cells whose case sums changed are estimated again. dbt reads the
    # frame's strings as varchar(256) and the table's as varchar, so its schema check would always
    # fail: a table of an older shape is rebuilt by `hindsight build` (ingest/build.py) instead
    dbt.config(materialized="incremental", incremental_strategy="delete+insert", on_schema_change="ignore",
               unique_key=["cohort", "model", "condition", "prompt_variant", "visibility"])
    # runs after int_metric_estimates, never beside it: the two never hold their case matrices at once
    dbt.ref("int_metric_estimates")
    sums = f"({dbt.ref('int_metric_case_sums').sql_query()})"
    cells = f"({dbt.ref('int_metric_cells').sql_query()})"
    cases = f"({dbt.ref('int_bootstrap_cases').sql_query()})"
    return estimates(session, sums, cells, cases, int(dbt.config.get("bootstrap_replicates")),
                     int(dbt.config.get("bootstrap_seed")),
                     method=str(dbt.config.get("ci_method")), this=str(dbt.this) if dbt.is_incremental else None,
                     leaf="eval_target", slices=["eval_target"], rollups={})
