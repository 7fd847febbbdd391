-- One row per cohort x model x prompt_variant x provider x template x parser
-- versions: where the stored answers came from (runner or replayed file), and
-- which prompt template and parsers turned them into scores.
with answers as (
    select * from {{ ref('fct_answers') }}
),

responses as (
    select response_id, prompt_template_version, response_parser_version, loaded_at
    from {{ ref('stg_raw__responses') }}
),

final as (
    select
        answers.cohort,
        answers.model,
        answers.prompt_variant,
        coalesce(answers.provider, 'replay') as provider,
        coalesce(answers.base_url_host, '') as base_url_host,
        coalesce(responses.prompt_template_version, 'unrecorded') as prompt_template_version,
        coalesce(responses.response_parser_version, 'unrecorded') as response_parser_version,
        answers.parser_version as answer_parser_version,
        string_agg(distinct answers.reported_model, ', ' order by answers.reported_model) as reported_models,
        cast(count(*) as integer) as n_answers,
        cast(count(*) filter (where answers.parse_status = 'invalid') as integer) as n_invalid,
        cast(count(*) filter (where answers.parse_status = 'truncated') as integer) as n_truncated,
        min(responses.loaded_at) as first_loaded_at,
        max(responses.loaded_at) as last_loaded_at
    from answers
    inner join responses on responses.response_id = answers.response_id
    group by all
)

select * from final
