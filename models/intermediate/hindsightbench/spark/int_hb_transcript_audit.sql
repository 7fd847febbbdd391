-- int_hb_transcript_audit.py on Spark: the same step (ingest/stats/hb_steps.py) in one task through
-- the table function hindsight_frames; every model is recomputed each build.
{{ config(materialized='table') }}
{{ frame_function_rows('hb_transcript_audit', [
    ('replies', ref('int_hb_arm_replies')),
    ('nodes', '(select decision_date, fake_date from ' ~ ref('int_hb_nodes') ~ ')'),
    ('patterns', ref('hb_transcript_patterns'))]) }}
