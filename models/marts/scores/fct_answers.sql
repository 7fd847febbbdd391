-- One row per stored answer (replayed or from a runner): its normalised form and parse status
-- under a versioned parser, and its Acc and HTR (NULL where the question's eval_target defines
-- none, or a free response is not judged yet). Parse failures are kept. The answer's text and
-- evidence are in fct_answer_texts (joined on response_id where a reader needs them), so this fact
-- stays narrow. The newest answer of a cell (question x model x condition x visibility x
-- prompt_variant x sample; a complete reply before a truncated one) is the one metrics use.
--
-- Incremental: only cells with an answer scored since the last build are rewritten (every answer
-- of such a cell, so `is_latest_in_cell` is decided over the whole cell).
{{ config(materialized='incremental', unique_key='response_key', incremental_strategy='delete+insert', on_schema_change='fail') }}
with scored as (
    select * from {{ ref('int_answers_scored') }}
),

{%- if is_incremental() %}
touched as (
    select distinct question_id, model, condition, visibility, prompt_variant, sample_index
    from scored
    where scored_at > (select coalesce(max(scored_at), '1970-01-01') from {{ this }})
),

answers as (
    select scored.*
    from scored
    semi join touched using (question_id, model, condition, visibility, prompt_variant, sample_index)
),
{%- else %}
answers as (
    select * from scored
),
{%- endif %}

newest as (
    -- one aggregate per cell, not a window over every answer
    select
        question_id, model, condition, visibility, prompt_variant, sample_index,
        -- ordered by completeness, then load, then line: response_key is load and line in one
        -- integer (load_id * 2^32 + line_number), and a complete answer adds 2^62 to it
        arg_max(response_key, response_key + case when parse_status <> 'truncated' then 4611686018427387904 else 0 end)
            as newest_response_key
    from answers
    group by question_id, model, condition, visibility, prompt_variant, sample_index
),

final as (
    select
        answers.response_id,
        answers.response_key,
        answers.cohort,
        answers.case_id,
        answers.question_id,
        answers.model,
        answers.provider,
        answers.base_url_host,
        answers.reported_model,
        answers.condition,
        answers.visibility,
        answers.prompt_variant,
        cast(answers.sample_index as integer) as sample_index,
        answers.format,
        answers.options_type,
        answers.eval_target,
        answers.response_parse_status,
        answers.finish_reason,
        answers.answer_normalised,
        answers.parse_status,
        answers.parser_version,
        cast(answers.acc as double) as acc,
        cast(answers.htr as double) as htr,
        answers.judge_model,
        answers.judgment_id,
        newest.newest_response_key is not null as is_latest_in_cell,
        answers.comparison_hash,
        answers.call_id,
        answers.prompt_template_version,
        answers.response_parser_version,
        answers.source_file,
        cast(answers.line_number as integer) as line_number,
        cast(answers.load_id as integer) as load_id,
        answers.loaded_at,
        answers.scored_at
    from answers
    left join newest on newest.newest_response_key = answers.response_key
)

select * from final
