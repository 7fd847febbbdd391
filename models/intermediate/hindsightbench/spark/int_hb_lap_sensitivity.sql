-- int_hb_lap_sensitivity.py on Spark: the same step (ingest/stats/hb_steps.py) in one task through
-- the table function hindsight_frames; every model is recomputed each build.
{{ config(materialized='table') }}
{{ frame_function_rows('hb_lap_sensitivity', [
    ('rep_counts', ref('int_hb_lap_rep_counts')), ('counts', ref('int_hb_sketch_counts')),
    ('dates', ref('int_hb_dates')), ('profiles', ref('sampling_profiles'))]) }}
