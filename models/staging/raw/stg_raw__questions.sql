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
        {{ json_text('payload', 'question') }} as question,
        {{ json_text('payload', 'format') }} as format,
        {{ json_array_text('payload', 'options') }} as options_json,
        {{ json_text('payload', 'options_type') }} as options_type,
        {{ json_text('payload', 'eval_target') }} as eval_target,
        {{ json_text('payload', 'reference_time') }} as reference_time,
        {{ json_text('payload', 'early_cutoff', 'event') }} as cutoff_event,
        cast({{ json_text('payload', 'early_cutoff', 'time') }} as double) as cutoff_hours,
        {{ json_text('payload', 'correct_answer') }} as correct_answer,
        {{ json_text('payload', 'hindsight_trap') }} as hindsight_trap,
        {{ json_text('payload', 'hindsight_trap_explanation') }} as hindsight_trap_explanation,
        source_file,
        line_number,
        load_id,
        loaded_at
    from ranked
    where version_rank = 1
)

select * from final
