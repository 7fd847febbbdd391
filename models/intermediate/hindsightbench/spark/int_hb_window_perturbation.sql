-- int_hb_window_perturbation.py on Spark: the same step (ingest/stats/hb_steps.py) in one task
-- through the table function hindsight_frames. Every model is recomputed each build (the function
-- has no session to read the stored fingerprints from); the rows are the same.
{{ config(materialized='table') }}
{{ frame_function_rows('hb_window_perturbation', [
    ('counts', ref('int_hb_sketch_counts')), ('dates', ref('int_hb_dates')),
    ('specs', ref('hb_window_perturbations')), ('events', ref('hb_crisis_events'))]) }}
