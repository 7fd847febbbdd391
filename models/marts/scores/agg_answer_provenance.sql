-- One row per cohort x model x prompt_variant x provider x template x parser
-- versions: where the stored answers came from (runner or replayed file), and
-- which prompt template and parsers turned them into scores.
--
-- Incremental: the rows of a model x prompt_variant are counted again when one of its answers was
-- scored after the newest score the table counted (scored_through): a new model's answers, newer
-- answers, or a re-scoring. An update of raw answers in place needs `hindsight build --full-refresh`.
-- The incremental pattern (stored marks and fingerprint, changed keys, the same SQL over them,
-- replaced whole): docs/architecture.md#the-incremental-pattern.
{{ config(materialized=('table' if target.type == 'spark' else 'incremental'), unique_key=['model', 'prompt_variant'],
          incremental_strategy='delete+insert', on_schema_change='fail') }}
with
{%- if is_incremental() %}

touched as (
    {{ groups_scored_since_last_build(['model', 'prompt_variant']) }}
),
{%- endif %}

responses as (
    -- each answer's payload fields as the build stored them once per answer (not the staging view,
    -- which parses every payload again: 7 s of a 100x full build with loaded payloads)
    select * from {{ ref('int_response_provenance') }}
    {%- if is_incremental() %}
    -- filtered on the model too, not only through the join, so that the scan skips the untouched
    -- models' rows (at 100x a new model's provenance took 1.4 s of joining 17.9 M answers, 0.15 s so)
    where model in (select model from touched)
    {%- endif %}
),

answers as (
    -- the scored answers with their question's cohort and their raw row's provenance
    select
        scored.model,
        scored.prompt_variant,
        scored.parser_version,
        scored.parse_status,
        scored.scored_at,
        questions.cohort,
        responses.provider,
        responses.base_url_host,
        responses.prompt_template_version,
        responses.response_parser_version,
        responses.reported_model,
        responses.loaded_at
    from {{ ref('int_answers_scored') }} as scored
    inner join responses on responses.response_key = scored.response_key
    inner join {{ ref('int_questions_positioned') }} as questions on questions.question_id = scored.question_id
    {%- if is_incremental() %}
    semi join touched on touched.model = scored.model and touched.prompt_variant = scored.prompt_variant
    {%- endif %}
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
        {{ sorted_distinct_string_agg('answers.reported_model', "', '") }} as reported_models,
        cast(count(*) as integer) as n_answers,
        cast(count(*) filter (where answers.parse_status = 'invalid') as integer) as n_invalid,
        cast(count(*) filter (where answers.parse_status = 'truncated') as integer) as n_truncated,
        min(answers.loaded_at) as first_loaded_at,
        max(answers.loaded_at) as last_loaded_at,
        max(answers.scored_at) as scored_through
    from answers
    group by all
)

select * from final
