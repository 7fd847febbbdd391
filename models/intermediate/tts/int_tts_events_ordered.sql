-- One row per valid event of a current TTS file, in chronological order:
-- numeric time, ties broken by the line order of the source file.
with records as (
    select * from {{ ref('stg_raw__tts_records') }}
    where is_current and record_status = 'valid'
),

ordered as (
    select
        cohort,
        case_id,
        source,
        source_file,
        line_number,
        event,
        time_hours,
        row_number() over (
            partition by cohort, case_id, source
            order by time_hours, line_number
        ) as chronological_index,
        -- an exact repeat of an earlier (event, time) row; kept, only flagged
        row_number() over (
            partition by cohort, case_id, source, event, time_hours
            order by line_number
        ) > 1 as is_duplicate
    from records
)

select * from ordered
