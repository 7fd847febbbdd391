-- One row per question x TTS source x visibility (full | masked): the TTS
-- context as the prompt shows it. Masked rows come from the masking view
-- only; a case without a file for a source gets no row for it, and a scope
-- with no visible event renders as '[]'.
with questions as (
    select question_id, cohort, case_id
    from {{ ref('int_questions_positioned') }}
),

case_sources as (
    select distinct cohort, case_id, source
    from {{ ref('stg_raw__tts_records') }}
    where is_current and record_status <> 'rejected_file'
),

scopes as (
    select
        questions.question_id,
        questions.cohort,
        questions.case_id,
        case_sources.source,
        visibilities.visibility
    from questions
    inner join case_sources
        on case_sources.cohort = questions.cohort
        and case_sources.case_id = questions.case_id
    cross join (values ('full'), ('masked')) as visibilities (visibility)
),

full_events as (
    select
        questions.question_id,
        events.source,
        'full' as visibility,
        events.event,
        events.time_hours,
        events.chronological_index
    from questions
    inner join {{ ref('int_tts_events_ordered') }} as events
        on events.cohort = questions.cohort
        and events.case_id = questions.case_id
),

masked_events as (
    select
        question_id,
        source,
        'masked' as visibility,
        event,
        time_hours,
        chronological_index
    from {{ ref('int_tts_events_masked') }}
),

context_events as (
    select * from full_events
    union all
    select * from masked_events
),

rendered as (
    select
        scopes.question_id,
        scopes.cohort,
        scopes.case_id,
        scopes.source,
        scopes.visibility,
        {{ tts_json_agg('context_events.event', 'context_events.time_hours', 'context_events.chronological_index') }} as tts_json,
        {{ tts_lines_agg('context_events.event', 'context_events.time_hours', 'context_events.chronological_index') }} as tts_lines,
        count(context_events.event) as n_events,
        max(context_events.time_hours) as last_event_hours
    from scopes
    left join context_events
        on context_events.question_id = scopes.question_id
        and context_events.source = scopes.source
        and context_events.visibility = scopes.visibility
    group by scopes.question_id, scopes.cohort, scopes.case_id, scopes.source, scopes.visibility
),

final as (
    select
        *,
        -- the synthetic narrative written from this context (§3.4: one per question, scope and
        -- source, even when two questions see the same events)
        case when n_events > 0
            then {{ surrogate_key(['question_id', 'source', 'visibility']) }}
        end as narrative_request_id
    from rendered
)

select * from final
