-- One row per stored answer (replayed or from a runner): its normalised form and parse status
-- under a versioned parser, and its Acc and HTR (NULL where the question's eval_target defines
-- none, or a free response is not judged yet). Parse failures are kept. The answer's text and
-- evidence are in fct_answer_texts (joined on response_key where a reader needs them), so this fact
-- stays narrow. The newest answer of a cell (question x model x condition x visibility x
-- prompt_variant x sample; a complete reply before a truncated one) is the one metrics use.
--
-- A view: int_answers_scored is the incremental table that scores answers and decides the newest
-- of each cell, narrow so that 17.8 M answers (100x the paper's cases) are written once per build
-- with what scoring decides; the question's labels, and the answer's id and provenance (each
-- answer's, stored once in int_response_provenance), are joined here. Its columns' tests are on
-- int_answers_scored, the table they come from (here each would join every answer's provenance).
{{ config(materialized='view') }}
with answers as (
    select * from {{ ref('int_answers_scored') }}
),

responses as (
    -- one row per response_key (int_response_provenance's key, tested there), joined plainly: a
    -- query of one model (the snapshot's publish of a model appended) reads that model's rows of it,
    -- where a grouped join read all 17.8 M (at 100x the paper's cases) first
    select * from {{ ref('int_response_provenance') }}
),

questions as (
    select * from {{ ref('int_questions_positioned') }}
),

final as (
    select
        responses.response_id,
        answers.response_key,
        questions.cohort,
        questions.case_id,
        answers.question_id,
        answers.model,
        responses.provider,
        responses.base_url_host,
        responses.reported_model,
        answers.condition,
        answers.visibility,
        answers.prompt_variant,
        cast(answers.sample_index as integer) as sample_index,
        questions.format,
        questions.options_type,
        questions.eval_target,
        responses.response_parse_status,
        responses.finish_reason,
        answers.answer_normalised,
        answers.parse_status,
        answers.parser_version,
        cast(answers.acc as double) as acc,
        cast(answers.htr as double) as htr,
        answers.judge_model,
        answers.judgment_id,
        answers.is_latest_in_cell,
        answers.comparison_hash,
        responses.call_id,
        responses.prompt_template_version,
        responses.response_parser_version,
        responses.source_file,
        cast(responses.line_number as integer) as line_number,
        cast(answers.load_id as integer) as load_id,
        responses.loaded_at,
        answers.scored_at
    from answers
    inner join questions on questions.question_id = answers.question_id
    left join responses on responses.response_key = answers.response_key
)

select * from final
