-- One row per cohort x model x prompt_variant x provider x template x parser
-- versions: where the stored answers came from (runner or replayed file), and
-- which prompt template and parsers turned them into scores.
with answers as (
    select * from {{ ref('fct_answers') }}
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
