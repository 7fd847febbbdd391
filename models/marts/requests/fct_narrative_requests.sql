-- One row per synthetic narrative condition 3.x needs (paper §3.4): one per question, information
-- scope (full timeline or masked at the question's cutoff) and TTS source, even when two questions
-- of a case see the same events. The runner writes one narrative per request and answering model.
with contexts as (
    select * from {{ ref('int_tts_contexts_rendered') }}
    where narrative_request_id is not null
),

profile as (
    select * from {{ sampling_profile_relation('narrative') }}
),

final as (
    select
        contexts.narrative_request_id,
        contexts.question_id,
        contexts.cohort,
        contexts.case_id,
        contexts.source,
        contexts.visibility,
        contexts.tts_lines,
        cast(contexts.n_events as integer) as n_events,
        contexts.last_event_hours,
        contexts.visibility = 'full' as is_full_timeline,
        {{ sampling_profile_columns('profile') }}
    from contexts
    cross join profile
)

select * from final
