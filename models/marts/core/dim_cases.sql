-- One row per case (cohort x case_id) with a narrative or a TTS file:
-- whether the narrative is there, and valid events per source.
with narratives as (
    select * from {{ ref('stg_raw__narratives') }}
),

tts_files as (
    select distinct cohort, case_id, source
    from {{ ref('stg_raw__tts_records') }}
    where is_current
),

events as (
    select * from {{ ref('int_tts_events_ordered') }}
),

questions as (
    select cohort, case_id, count(*) as n_questions
    from {{ ref('stg_raw__questions') }}
    group by cohort, case_id
),

cases as (
    select cohort, case_id from narratives
    union
    select cohort, case_id from tts_files
),

events_per_source as (
    select
        tts_files.cohort,
        tts_files.case_id,
        tts_files.source,
        count(events.line_number) as n_events
    from tts_files
    left join events
        on events.cohort = tts_files.cohort
        and events.case_id = tts_files.case_id
        and events.source = tts_files.source
    group by tts_files.cohort, tts_files.case_id, tts_files.source
),

per_case as (
    select
        cohort,
        case_id,
        -- keys in source order, so the text is the same on every build
        {{ json_map_agg('source', 'n_events') }} as events_per_source,
        sum(n_events) filter (where source = '{{ var("reference_source") }}') as n_reference_events,
        count(*) as n_sources
    from events_per_source
    group by cohort, case_id
),

final as (
    select
        cases.case_id,
        cases.cohort,
        narratives.case_id is not null as has_narrative,
        narratives.narrative_encoding,
        cast(length(narratives.narrative_text) as integer) as narrative_chars,
        coalesce(per_case.events_per_source, '{}') as events_per_source,
        cast(coalesce(per_case.n_reference_events, 0) as integer) as n_reference_events,
        cast(coalesce(per_case.n_sources, 0) as integer) as n_sources,
        cast(coalesce(questions.n_questions, 0) as integer) as n_questions
    from cases
    left join narratives
        on narratives.cohort = cases.cohort and narratives.case_id = cases.case_id
    left join per_case
        on per_case.cohort = cases.cohort and per_case.case_id = cases.case_id
    left join questions
        on questions.cohort = cases.cohort and questions.case_id = cases.case_id
)

select * from final
