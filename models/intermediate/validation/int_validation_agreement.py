"""Table G.1 per validation design, cohort (and `all`), item and statistic, with case-clustered
bootstrap intervals (ingest/stats/validation_agreement.py)."""
from ingest.stats.validation_agreement import agreement_table


def model(dbt, session):
    dbt.config(materialized="table")
    annotations = dbt.ref("stg_raw__annotations").df()
    return agreement_table(dbt.ref("stg_raw__validation_cases").df(), annotations, dbt.ref("stg_raw__judge_checks").df(),
                           int(dbt.config.get("bootstrap_replicates")), int(dbt.config.get("bootstrap_seed")))
