"""One row per metric cell at two groupings: `format` (cohort x model x
condition x prompt_variant x metric x visibility x format x options_type)
and `overall` (without format and options_type), with the case-clustered
bootstrap CI and the other statistics of ingest/metric_estimates.py. Overall
cells are sums of format cells: one matrix product per cohort serves both.
"""
from ingest.metric_estimates import CELL, estimates


def model(dbt, session):
    dbt.config(materialized="table")
    facts = {"fct_answers": f"({dbt.ref('fct_answers').sql_query()})",
             "fct_answer_pairs": f"({dbt.ref('fct_answer_pairs').sql_query()})"}
    cases = f"({dbt.ref('int_bootstrap_cases').sql_query()})"
    return estimates(session, facts, cases, int(dbt.config.get("bootstrap_replicates")),
                     int(dbt.config.get("bootstrap_seed")),
                     leaf="format", slices=["format", "options_type"], rollups={"overall": CELL})
