"""One row per metric cell at grouping `eval_target` (cohort x model x
condition x prompt_variant x metric x visibility x eval_target), with the
same estimator and the same bootstrap draws as agg_metric_estimates
(ingest/metric_estimates.py), from its own pass over the facts.
"""
from ingest.metric_estimates import estimates


def model(dbt, session):
    dbt.config(materialized="table")
    # runs after agg_metric_estimates, never beside it: the two never hold their case matrices at once
    dbt.ref("agg_metric_estimates")
    facts = {"fct_answers": f"({dbt.ref('fct_answers').sql_query()})",
             "fct_answer_pairs": f"({dbt.ref('fct_answer_pairs').sql_query()})"}
    cases = f"({dbt.ref('int_bootstrap_cases').sql_query()})"
    return estimates(session, facts, cases, int(dbt.config.get("bootstrap_replicates")),
                     int(dbt.config.get("bootstrap_seed")), leaf="eval_target", slices=["eval_target"], rollups={})
