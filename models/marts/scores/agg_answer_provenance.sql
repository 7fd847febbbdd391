-- One row per cohort x model x prompt_variant x provider x template x parser
-- versions: where the stored answers came from (runner or replayed file), and
-- which prompt template and parsers turned them into scores.
with answers as (
    -- the scored answers with their question's cohort and their raw row's provenance, joined here
    -- (fct_answers joins every answer's provenance through a grouping, for its readers that need none)
    select
        scored.model,
        scored.prompt_variant,
        scored.parser_version,
        scored.parse_status,
        questions.cohort,
        responses.provider,
        responses.base_url_host,
        responses.prompt_template_version,
        responses.response_parser_version,
        responses.reported_model,
        responses.loaded_at
    from {{ ref('int_answers_scored') }} as scored
    inner join {{ ref('stg_raw__responses') }} as responses on responses.response_key = scored.response_key
    inner join {{ ref('int_questions_positioned') }} as questions on questions.question_id = scored.question_id
),

final as (
    select
        answers.cohort,
        answers.model,
        answers.prompt_variant,
        coalesce(answers.provider, 'replay') as provider,
        coalesce(answers.base_url_host, '') as base_url_host,
        coalesce(answers.prompt_template_version, 'unrecorded') as prompt_template_version,
        coalesce(answers.response_parser_version, 'unrecorded') as response_parser_version,
        answers.parser_version as answer_parser_version,
        string_agg(distinct answers.reported_model, ', ' order by answers.reported_model) as reported_models,
        cast(count(*) as integer) as n_answers,
        cast(count(*) filter (where answers.parse_status = 'invalid') as integer) as n_invalid,
        cast(count(*) filter (where answers.parse_status = 'truncated') as integer) as n_truncated,
        min(answers.loaded_at) as first_loaded_at,
        max(answers.loaded_at) as last_loaded_at
    from answers
    group by all
)

select * from final
