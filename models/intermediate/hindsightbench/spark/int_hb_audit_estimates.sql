-- int_hb_audit_estimates.py on Spark: the same step (ingest/stats/hb_steps.py) in one task through
-- the table function hindsight_frames; its inputs are a few thousand rows of counts.
{{ config(materialized='table') }}
with frames as (
    {{ frame_rows('counts', ref('int_hb_sketch_counts')) }}
    union all
    {{ frame_rows('dates', ref('int_hb_dates')) }}
    union all
    {{ frame_rows('lap', ref('int_hb_lap_by_date')) }}
)

{{ frame_function_rows('hb_audit_estimates', 'frames') }}
