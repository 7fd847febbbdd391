-- Assert that each masked context shows exactly the full context's events at or before the
-- cutoff: nothing after it leaks in, and nothing before it is lost.
with contexts as (
    select * from {{ ref('int_tts_contexts_rendered') }}
),

questions as (
    select question_id, cohort, case_id, cutoff_hours from {{ ref('dim_questions') }}
),

expected as (
    select
        questions.question_id,
        events.source,
        count(*) filter (where events.time_hours <= questions.cutoff_hours) as n_expected
    from questions
    inner join {{ ref('fct_tts_events') }} as events
        on events.cohort = questions.cohort
        and events.case_id = questions.case_id
    group by questions.question_id, events.source
)

select
    contexts.question_id,
    contexts.source,
    contexts.n_events,
    coalesce(expected.n_expected, 0) as n_expected
from contexts
left join expected
    on expected.question_id = contexts.question_id
    and expected.source = contexts.source
where contexts.visibility = 'masked'
  and contexts.n_events <> coalesce(expected.n_expected, 0)
