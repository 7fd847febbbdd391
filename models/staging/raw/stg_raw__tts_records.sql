-- Every record of every current TTS file, typed and classified: valid
-- `event | hours` rows get time_hours; everything else keeps its text and a
-- quarantine reason. A file re-loaded with new content supersedes the old one.
{#- the classifier's patterns as SQL literals, verbatim (the same text on both engines) #}
{%- set markup_fence %}'^(```|~~~|\\[a-zA-Z\[\]]|\\+$|</?think>|#{1,6}\s|[{}])'{% endset %}
{%- set markup_table %}'^\|.*\|$|^\|?\s*:?-{3,}'{% endset %}
{%- set markup_bold %}'\*\*'{% endset %}
{%- set markup_tabular %}'\s&\s'{% endset %}
{%- set header_event %}'^\W*(clinical\s+)?events?(\s+name)?\W*$'{% endset %}
{%- set header_time %}'^\W*(time|timestamp|hours?)\b'{% endset %}
{%- set decimal %}'^[+-]?(\d+(\.\d*)?|\.\d+)$'{% endset %}
{%- set calendar_year %}'^[-+–]\s+(1[89]|20)\d\d$'{% endset %}
{%- set time_range %}'^[+-]?\d[\d,]*(\.\d+)?\s*([a-z]+\s*)?(-|–|—|to)\s*[+-]?\d[\d,]*(\.\d+)?(\s*[a-z]+)?$'{% endset %}
{%- set arithmetic %}'^[+-]?\d+(\.\d+)?(\s*[*/×x+-]\s*\d+(\.\d+)?)+$'{% endset %}
{%- set units %}'^[+-]?\s*\d+(\.\d+)?\s*(h|hr|hrs|hours?|d|days?|w|wk|wks|weeks?|mo|months?|y|yr|yrs|years?|min|mins|minutes?)\.?$'{% endset %}
{%- set placeholder %}'^[+-]?\s*(\?+|unknown|n/?a|none|null|nan|tbd|unspecified|not specified|x|-+)(\W.*)?$'{% endset %}
{%- set number_format %}'^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$'{% endset %}
{%- set number_with_text %}'^[+-]?\d'{% endset %}
{%- set prose %}'[A-Za-z]{2,}'{% endset %}
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
                {{ regex_search("trimmed_record", markup_fence) }}
                or {{ regex_search("trimmed_record", markup_table) }}
                or {{ regex_search("trimmed_record", markup_bold) }}
                or (n_fields < 2 and {{ regex_search("trimmed_record", markup_tabular) }})
            ) then 'markup'
            when file_format = 'jsonl' and n_fields = 0 then 'invalid_json'
            when file_format = 'json' and n_fields <= 1 and event_clean is null and time_clean is null then 'not_an_object'
            when file_format in ('bsv', 'csv') and n_fields < 2 then 'no_delimiter'
            when {{ regex_search("lower(coalesce(event_clean, ''))", header_event) }}
                and {{ regex_search("lower(coalesce(time_clean, ''))", header_time) }} then 'header'
            when file_format in ('bsv', 'csv') and n_fields > 2 then 'extra_fields'
            when coalesce(event_clean, '') = '' then 'empty_event'
            when coalesce(time_clean, '') = '' then 'empty_time'
            when {{ regex_search("time_clean", decimal) }} then null
            -- `- 2002` is a calendar year, never -2002 hours
            when {{ regex_search("time_clean", calendar_year) }} then 'calendar_year'
            -- `24-168`, `-1440 to -1296`, `-6 months to -2 months`
            when {{ regex_search("lower(time_clean)", time_range) }} then 'range'
            when {{ regex_search("time_clean", arithmetic) }} then 'arithmetic'
            when {{ regex_search("lower(time_clean)", units) }}
                then 'units'
            when {{ regex_search("lower(time_clean)", placeholder) }}
                then 'placeholder'
            when {{ regex_search("time_clean", number_format) }} then 'number_format'
            when {{ regex_search("time_clean", number_with_text) }} then 'number_with_text'
            when {{ regex_search("time_clean", prose) }} then 'prose'
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
