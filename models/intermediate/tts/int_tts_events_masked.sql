-- One row per (question, source, event) visible at the question's cutoff:
-- the masking view of paper eq. 1. The same numeric cutoff (H time
-- coordinate) applies to every source.
with questions as (
    select question_id, cohort, case_id, cutoff_hours
    from {{ ref('int_questions_positioned') }}
),

events as (
    select * from {{ ref('int_tts_events_ordered') }}
),

masked as (
    select
        questions.question_id,
        questions.cohort,
        questions.case_id,
        questions.cutoff_hours,
        events.source,
        events.line_number,
        events.event,
        events.time_hours,
        events.chronological_index
    from questions
    inner join events
        on events.cohort = questions.cohort
        and events.case_id = questions.case_id
    where {{ is_visible_at_cutoff('events.time_hours', 'questions.cutoff_hours') }}
)

select * from masked
