-- One row per stored answer (replayed or from a runner): its normalised form and parse status
-- under a versioned parser, and its Acc and HTR (NULL where the question's eval_target defines
-- none, or a free response is not judged yet). Parse failures are kept. The answer's text and
-- evidence are in fct_answer_texts (joined on response_key where a reader needs them), so this fact
-- stays narrow. The newest answer of a cell (question x model x condition x visibility x
-- prompt_variant x sample; a complete reply before a truncated one) is the one metrics use.
--
-- A view: int_answers_scored is the incremental table that scores answers and decides the newest
-- of each cell, so 17.8 M answers (100x the paper's cases) are written once per build, not twice.
{{ config(materialized='view') }}
with answers as (
    select * from {{ ref('int_answers_scored') }}
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
        answers.is_latest_in_cell,
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
)

select * from final
