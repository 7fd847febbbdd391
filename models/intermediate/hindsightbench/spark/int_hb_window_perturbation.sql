-- int_hb_window_perturbation.py on Spark: the same step (ingest/stats/hb_steps.py) in one task
-- through the table function hindsight_frames. Every model is recomputed each build (Spark has no
-- session to read the stored fingerprints from inside the function); the rows are the same.
{{ config(materialized='table') }}
with frames as (
    {{ frame_rows('counts', ref('int_hb_sketch_counts')) }}
    union all
    {{ frame_rows('dates', ref('int_hb_dates')) }}
    union all
    {{ frame_rows('specs', ref('hb_window_perturbations')) }}
    union all
    {{ frame_rows('events', ref('hb_crisis_events')) }}
)

{{ frame_function_rows('hb_window_perturbation', 'frames') }}
