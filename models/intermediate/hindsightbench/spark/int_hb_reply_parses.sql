-- int_hb_reply_parses.py on Spark, where dbt runs no Python model: the same step
-- (ingest/stats/hb_steps.py) on the executors through the table function hindsight_frames, one task
-- per model; a model's replies travel as JSON rows.
{{ config(materialized='table') }}
with replies as (
    select
        'replies' as frame,
        to_json(struct(responses.*), map('ignoreNullFields', 'false')) as payload,
        responses.model_key as part
    from {{ ref('stg_raw__hb_responses') }} as responses
),

parsed as (
    {{ frame_function_rows('hb_reply_parses', 'replies') }}
)

select * from parsed
