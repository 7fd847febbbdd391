"""Table G.1 per validation design, cohort (and `all`), item and statistic, with case-clustered
bootstrap intervals (ingest/stats/validation_agreement.py)."""
from ingest.stats.validation_agreement import agreement_table


def model(dbt, session):
    dbt.config(materialized="table")
    annotations = dbt.ref("stg_raw__annotations").df()
    # `auto`: numpy's streams here (Spark draws the warehouse's: models/intermediate/validation/spark/)
    draws = str(dbt.config.get("validation_bootstrap_draws"))
    return agreement_table(dbt.ref("stg_raw__validation_cases").df(), annotations, dbt.ref("stg_raw__judge_checks").df(),
                           int(dbt.config.get("bootstrap_replicates")), int(dbt.config.get("bootstrap_seed")),
                           draws="numpy" if draws == "auto" else draws)
