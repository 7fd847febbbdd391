-- int_validation_agreement.py on Spark, where dbt runs no Python model: Table G.1 by the same
-- function (ingest/stats/validation_agreement.py, the warehouse's draws), run on an executor through
-- the table function hindsight_frames (ingest/spark/functions.py). Its inputs are a few hundred rows:
-- they travel as JSON, in one task.
{{ config(materialized='table') }}
{%- if var('validation_bootstrap_draws') not in ['auto', 'warehouse'] %}
    {{ exceptions.raise_compiler_error("validation_bootstrap_draws '" ~ var('validation_bootstrap_draws')
        ~ "' is drawn by numpy on DuckDB only: use `warehouse` (or `auto`) on " ~ target.type) }}
{%- endif %}
{{ frame_function_rows('validation_agreement', [
    ('cases', ref('stg_raw__validation_cases')), ('annotations', ref('stg_raw__annotations')),
    ('judged', ref('stg_raw__judge_checks'))]) }}
