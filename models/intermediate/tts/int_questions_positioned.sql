-- One row per question, with its numeric cutoff placed on the case's
-- reference (H) timeline. RelPos = (k - 1) / (n - 1), where n is the number
-- of valid reference events and k the number of them at or before the
-- cutoff, i.e. the chronological index of the last event still visible.
with questions as (
    select * from {{ ref('stg_raw__questions') }}
),

reference_events as (
    select cohort, case_id, time_hours
    from {{ ref('int_tts_events_ordered') }}
    where source = '{{ var("reference_source") }}'
),

counted as (
    select
        questions.question_id,
        count(reference_events.time_hours) as n_reference_events,
        count(reference_events.time_hours) filter (
            where {{ is_visible_at_cutoff('reference_events.time_hours', 'questions.cutoff_hours') }}
        ) as n_reference_events_at_cutoff
    from questions
    left join reference_events
        on reference_events.cohort = questions.cohort
        and reference_events.case_id = questions.case_id
    group by questions.question_id
),

final as (
    select
        questions.*,
        counted.n_reference_events,
        counted.n_reference_events_at_cutoff,
        case
            when counted.n_reference_events >= 2 and counted.n_reference_events_at_cutoff >= 1
            then cast(counted.n_reference_events_at_cutoff - 1 as double) / (counted.n_reference_events - 1)
        end as relpos,
        case
            when counted.n_reference_events = 0 then 'no_reference_events'
            when counted.n_reference_events = 1 then 'fewer_than_two_reference_events'
            when counted.n_reference_events_at_cutoff = 0 then 'cutoff_before_first_event'
        end as relpos_undefined_reason
    from questions
    inner join counted
        on counted.question_id = questions.question_id
)

select * from final
