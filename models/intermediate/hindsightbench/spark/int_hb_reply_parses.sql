-- int_hb_reply_parses.py on Spark, where dbt runs no Python model: the same step
-- (ingest/stats/hb_steps.py) on the executors through the table function hindsight_frames, one task
-- per model; a model's replies travel as JSON rows.
{{ config(materialized='table') }}
with frames as (
    select
        replies.model_key as part,
        'replies' as frame,
        to_json(struct(replies.*), map('ignoreNullFields', 'false')) as payload
    from {{ ref('stg_raw__hb_responses') }} as replies
)

{{ frame_function_rows('hb_reply_parses', 'frames', partitioned=true) }}
