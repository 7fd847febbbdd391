-- int_hb_serving_stability.py on Spark: the same step (ingest/stats/hb_steps.py) in one task through
-- the table function hindsight_frames.
{{ config(materialized='table') }}
with frames as (
    {{ frame_rows('registry', ref('stg_raw__hb_registry')) }}
    union all
    {{ frame_rows('rows', ref('int_hb_window_perturbation')) }}
)

{{ frame_function_rows('hb_serving_stability', 'frames') }}
