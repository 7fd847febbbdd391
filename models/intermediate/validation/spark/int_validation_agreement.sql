-- int_validation_agreement.py on Spark, where dbt runs no Python model: Table G.1 by the same
-- function (ingest/stats/validation_agreement.py, the warehouse's draws), run on an executor through
-- the table function hindsight_frames (ingest/spark/functions.py). Its inputs are a few hundred rows:
-- they travel as JSON, in one task.
{{ config(materialized='table') }}
{%- if var('validation_bootstrap_draws') not in ['auto', 'warehouse'] %}
    {{ exceptions.raise_compiler_error("validation_bootstrap_draws '" ~ var('validation_bootstrap_draws')
        ~ "' is drawn by numpy on DuckDB only: use `warehouse` (or `auto`) on " ~ target.type) }}
{%- endif %}
with frames as (
    {{ frame_rows('cases', ref('stg_raw__validation_cases')) }}
    union all
    {{ frame_rows('annotations', ref('stg_raw__annotations')) }}
    union all
    {{ frame_rows('judged', ref('stg_raw__judge_checks')) }}
),

agreement as (
    select from_json(payload, '{{ validation_agreement_columns() }}') as row
    from hindsight_frames(
        TABLE(frames) WITH SINGLE PARTITION, 'validation_agreement',
        '{"replicates": {{ var("bootstrap_replicates") }}, "seed": {{ var("bootstrap_seed") }}}')
)

select row.* from agreement
