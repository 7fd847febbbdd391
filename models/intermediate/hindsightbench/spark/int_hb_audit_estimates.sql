-- int_hb_audit_estimates.py on Spark: the same step (ingest/stats/hb_steps.py) in one task through
-- the table function hindsight_frames; its inputs are a few thousand rows of counts.
{{ config(materialized='table') }}
{{ frame_function_rows('hb_audit_estimates', [
    ('counts', ref('int_hb_sketch_counts')), ('dates', ref('int_hb_dates')), ('lap', ref('int_hb_lap_by_date'))]) }}
