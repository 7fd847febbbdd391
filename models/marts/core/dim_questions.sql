-- One row per question: the visible fields, the hidden evaluation fields,
-- and the cutoff's place on the reference timeline (RelPos, paper §3.4), with its band (var
-- relpos_band_edges: early, middle, late) for slicing.
with questions as (
    select * from {{ ref('int_questions_positioned') }}
),

final as (
    select
        question_id,
        case_id,
        cohort,
        question,
        format,
        options_json,
        options_type,
        eval_target,
        reference_time,
        cutoff_event,
        cutoff_hours,
        correct_answer,
        hindsight_trap,
        hindsight_trap_explanation,
        cast(n_reference_events as integer) as n_reference_events,
        cast(n_reference_events_at_cutoff as integer) as n_reference_events_at_cutoff,
        relpos,
        case
            when relpos is null then null
            when relpos < {{ var('relpos_band_edges')[0] }} then 'early'
            when relpos < {{ var('relpos_band_edges')[1] }} then 'middle'
            else 'late'
        end as relpos_band,
        relpos_undefined_reason,
        relpos_method,
        source_file,
        line_number,
        load_id
    from questions
)

select * from final
