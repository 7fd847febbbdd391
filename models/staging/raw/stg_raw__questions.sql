-- One row per question (its latest accepted version), generator fields typed.
--
-- A table, unlike the other staging models: every scoring and metric model reads the questions
-- (through int_questions_positioned), and parsing 171,000 JSON payloads and ranking their versions
-- took 0.5 s per read at 100x the paper's cases; it changes only with a load of questions, so a
-- build that adds answers reads it as it stands.
{{ config(materialized='table') }}
with source as (
    select * from {{ source('raw', 'questions') }}
),

ranked as (
    select
        *,
        row_number() over (partition by question_id order by load_id desc, line_number desc) as version_rank
    from source
),

final as (
    select
        question_id,
        cohort,
        case_id,
        payload ->> 'question' as question,
        payload ->> 'format' as format,
        case when json_type(payload -> 'options') = 'ARRAY' then cast(payload -> 'options' as varchar) end as options_json,
        payload ->> 'options_type' as options_type,
        payload ->> 'eval_target' as eval_target,
        payload ->> 'reference_time' as reference_time,
        payload -> 'early_cutoff' ->> 'event' as cutoff_event,
        cast(payload -> 'early_cutoff' ->> 'time' as double) as cutoff_hours,
        payload ->> 'correct_answer' as correct_answer,
        payload ->> 'hindsight_trap' as hindsight_trap,
        payload ->> 'hindsight_trap_explanation' as hindsight_trap_explanation,
        source_file,
        line_number,
        load_id,
        loaded_at
    from ranked
    where version_rank = 1
)

select * from final
