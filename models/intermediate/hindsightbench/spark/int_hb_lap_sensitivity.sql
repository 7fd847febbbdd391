-- int_hb_lap_sensitivity.py on Spark: the same step (ingest/stats/hb_steps.py) in one task through
-- the table function hindsight_frames; every model is recomputed each build.
{{ config(materialized='table') }}
with frames as (
    {{ frame_rows('rep_counts', ref('int_hb_lap_rep_counts')) }}
    union all
    {{ frame_rows('counts', ref('int_hb_sketch_counts')) }}
    union all
    {{ frame_rows('dates', ref('int_hb_dates')) }}
    union all
    {{ frame_rows('profiles', ref('sampling_profiles')) }}
)

{{ frame_function_rows('hb_lap_sensitivity', 'frames') }}
