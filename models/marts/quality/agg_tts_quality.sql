-- One row per cohort x source x status x reason: how many records of the
-- current TTS files are valid, quarantined (by reason) or in a file rejected
-- whole. Every record is counted exactly once.
with records as (
    select * from {{ ref('stg_raw__tts_records') }}
    where is_current
),

final as (
    select
        cohort,
        source,
        record_status as status,
        quarantine_reason as reason,
        cast(count(*) as integer) as n_lines,
        cast(count(distinct source_file) as integer) as n_files
    from records
    group by cohort, source, record_status, quarantine_reason
)

select * from final
