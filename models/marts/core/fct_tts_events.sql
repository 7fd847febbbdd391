-- One row per valid TTS event (current file versions), with its file, line
-- and chronological index within its case and source.
with events as (
    select * from {{ ref('int_tts_events_ordered') }}
),

final as (
    select
        {{ surrogate_key(['cohort', 'case_id', 'source', 'line_number']) }} as event_id,
        cohort,
        case_id,
        source,
        source_file,
        cast(line_number as integer) as line_number,
        event,
        time_hours,
        cast(chronological_index as integer) as chronological_index,
        is_duplicate
    from events
)

select * from final
