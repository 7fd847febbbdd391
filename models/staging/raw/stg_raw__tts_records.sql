-- Every record of every current TTS file, typed and classified: valid
-- `event | hours` rows get time_hours; everything else keeps its text and a
-- quarantine reason. A file re-loaded with new content supersedes the old one.
with source as (
    select * from {{ source('raw', 'tts_records') }}
),

current_files as (
    select
        *,
        dense_rank() over (partition by cohort, source, case_id order by load_id desc) as version_rank,
        trim(record_text) as trimmed_record,
        trim(event_text) as event_clean,
        trim(time_text) as time_clean
    from source
),

classified as (
    select
        load_id,
        cohort,
        case_id,
        source,
        source_file,
        file_format,
        line_number,
        record_text,
        event_clean as event,
        time_clean as time_text,
        case
            when file_status = 'rejected' then 'rejected_file'
            -- code fences, LaTeX commands and tabular rows, markdown tables,
            -- headings and bold, think tags, braces
            when file_format = 'bsv' and (
                regexp_matches(trimmed_record, '^(```|~~~|\\[a-zA-Z\[\]]|\\+$|</?think>|#{1,6}\s|[{}])')
                or regexp_matches(trimmed_record, '^\|.*\|$|^\|?\s*:?-{3,}')
                or regexp_matches(trimmed_record, '\*\*')
                or (n_fields < 2 and regexp_matches(trimmed_record, '\s&\s'))
            ) then 'markup'
            when file_format = 'jsonl' and n_fields = 0 then 'invalid_json'
            when file_format = 'json' and n_fields <= 1 and event_clean is null and time_clean is null then 'not_an_object'
            when file_format in ('bsv', 'csv') and n_fields < 2 then 'no_delimiter'
            when regexp_matches(lower(coalesce(event_clean, '')), '^\W*(clinical\s+)?events?(\s+name)?\W*$')
                and regexp_matches(lower(coalesce(time_clean, '')), '^\W*(time|timestamp|hours?)\b') then 'header'
            when file_format in ('bsv', 'csv') and n_fields > 2 then 'extra_fields'
            when coalesce(event_clean, '') = '' then 'empty_event'
            when coalesce(time_clean, '') = '' then 'empty_time'
            when regexp_matches(time_clean, '^[+-]?(\d+(\.\d*)?|\.\d+)$') then null
            -- `- 2002` is a calendar year, never -2002 hours
            when regexp_matches(time_clean, '^[-+–]\s+(1[89]|20)\d\d$') then 'calendar_year'
            -- `24-168`, `-1440 to -1296`, `-6 months to -2 months`
            when regexp_matches(lower(time_clean),
                '^[+-]?\d[\d,]*(\.\d+)?\s*([a-z]+\s*)?(-|–|—|to)\s*[+-]?\d[\d,]*(\.\d+)?(\s*[a-z]+)?$') then 'range'
            when regexp_matches(time_clean, '^[+-]?\d+(\.\d+)?(\s*[*/×x+-]\s*\d+(\.\d+)?)+$') then 'arithmetic'
            when regexp_matches(lower(time_clean),
                '^[+-]?\s*\d+(\.\d+)?\s*(h|hr|hrs|hours?|d|days?|w|wk|wks|weeks?|mo|months?|y|yr|yrs|years?|min|mins|minutes?)\.?$')
                then 'units'
            when regexp_matches(lower(time_clean), '^[+-]?\s*(\?+|unknown|n/?a|none|null|nan|tbd|unspecified|not specified|x|-+)(\W.*)?$')
                then 'placeholder'
            when regexp_matches(time_clean, '^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$') then 'number_format'
            when regexp_matches(time_clean, '^[+-]?\d') then 'number_with_text'
            when regexp_matches(time_clean, '[A-Za-z]{2,}') then 'prose'
            else 'unparseable'
        end as quarantine_reason,
        version_rank = 1 as is_current
    from current_files
),

final as (
    select
        *,
        case when quarantine_reason is null then cast(time_text as double) end as time_hours,
        case
            when quarantine_reason is null then 'valid'
            when quarantine_reason = 'rejected_file' then 'rejected_file'
            else 'quarantined'
        end as record_status
    from classified
)

select * from final
