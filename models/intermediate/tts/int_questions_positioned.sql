-- One row per question, with its numeric cutoff placed on the case's reference (H) timeline.
-- RelPos = (k - 1) / (n - 1) (paper §3.5), n the number of valid reference events and k the
-- chronological index of the cutoff event (early_cutoff.event): the reference event at the
-- cutoff time whose text matches it once normalised (the first such event if it repeats). Many
-- events share a time (admission, 0): the last of them is not the cutoff event. When no event at
-- the cutoff time matches, k falls back to the index of the last event at or before the cutoff.
with questions as (
    select * from {{ ref('stg_raw__questions') }}
),

reference_events as (
    -- each text normalised once, not once per question it is compared with
    select cohort, case_id, time_hours, chronological_index, {{ normalised_event_text('event') }} as event_key
    from {{ ref('int_tts_events_ordered') }}
    where source = '{{ var("reference_source") }}'
),

cutoffs as (
    select question_id, cohort, case_id, cutoff_hours, {{ normalised_event_text('cutoff_event') }} as event_key
    from questions
),

counted as (
    select
        cutoffs.question_id,
        count(reference_events.time_hours) as n_reference_events,
        count(reference_events.time_hours) filter (
            where {{ is_visible_at_cutoff('reference_events.time_hours', 'cutoffs.cutoff_hours') }}
        ) as n_reference_events_at_cutoff,
        min(reference_events.chronological_index) filter (
            where reference_events.time_hours = cutoffs.cutoff_hours
                and reference_events.event_key = cutoffs.event_key
        ) as cutoff_event_index
    from cutoffs
    left join reference_events
        on reference_events.cohort = cutoffs.cohort
        and reference_events.case_id = cutoffs.case_id
    group by cutoffs.question_id
),

positioned as (
    select
        questions.*,
        counted.n_reference_events,
        counted.n_reference_events_at_cutoff,
        coalesce(counted.cutoff_event_index, counted.n_reference_events_at_cutoff) as cutoff_index,
        case
            when counted.cutoff_event_index is not null then 'cutoff_event'
            when counted.n_reference_events_at_cutoff >= 1 then 'last_event_at_cutoff'
        end as relpos_method
    from questions
    inner join counted
        on counted.question_id = questions.question_id
),

final as (
    select
        {{ star_except(['cutoff_index', 'relpos_method']) }},
        case
            when n_reference_events >= 2 and cutoff_index >= 1
            then cast(cutoff_index - 1 as double) / (n_reference_events - 1)
        end as relpos,
        case when n_reference_events >= 2 and cutoff_index >= 1 then relpos_method end as relpos_method,
        case
            when n_reference_events = 0 then 'no_reference_events'
            when n_reference_events = 1 then 'fewer_than_two_reference_events'
            when cutoff_index = 0 then 'cutoff_before_first_event'
        end as relpos_undefined_reason
    from positioned
)

select * from final
