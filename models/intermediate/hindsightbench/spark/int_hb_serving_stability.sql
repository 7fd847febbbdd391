-- int_hb_serving_stability.py on Spark: the same step (ingest/stats/hb_steps.py) in one task through
-- the table function hindsight_frames.
{{ config(materialized='table') }}
{{ frame_function_rows('hb_serving_stability', [
    ('registry', ref('stg_raw__hb_registry')), ('rows', ref('int_hb_window_perturbation'))]) }}
