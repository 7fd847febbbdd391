-- One row per distinct information scope (case x source x set of visible
-- events) for which condition 3.x needs a synthetic narrative. The runner
-- writes one narrative per scope and answering model.
with contexts as (
    select * from {{ ref('int_tts_contexts_rendered') }}
    where narrative_request_id is not null
),

scopes as (
    select
        narrative_request_id,
        cohort,
        case_id,
        source,
        tts_lines,
        n_events,
        last_event_hours,
        bool_or(visibility = 'full') as is_full_timeline,
        count(distinct question_id) as n_questions
    from contexts
    group by narrative_request_id, cohort, case_id, source, tts_lines, n_events, last_event_hours
),

final as (
    select
        narrative_request_id,
        cohort,
        case_id,
        source,
        tts_lines,
        cast(n_events as integer) as n_events,
        last_event_hours,
        is_full_timeline,
        cast(n_questions as integer) as n_questions
    from scopes
)

select * from final
