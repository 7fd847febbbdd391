-- One row per cohort x model x condition x visibility: how many stored replies ended on the token
-- limit (truncated), counted apart from answers that did not parse, and how many of the answers the
-- metrics use are still truncated (`hindsight answer --retry-truncated --max-tokens N` re-asks those).
--
-- Incremental: the rows of a model x condition x visibility are counted again when one of its answers
-- was scored after the newest score the table counted (scored_through); a cell lies within one such
-- group, so an answer that stops being its cell's newest is counted again with the new one.
{{ config(materialized=('table' if target.type == 'spark' else 'incremental'), unique_key=['model', 'condition', 'visibility'], incremental_strategy='delete+insert',
          on_schema_change='fail') }}
with
{%- if is_incremental() %}

touched as (
    {{ groups_scored_since_last_build(['model', 'condition', 'visibility']) }}
),
{%- endif %}

answers as (
    -- the narrow scored table and the question's cohort (fct_answers would join every answer's provenance)
    select answers.*, questions.cohort
    from {{ ref('int_answers_scored') }} as answers
    inner join {{ ref('int_questions_positioned') }} as questions on questions.question_id = answers.question_id
    {%- if is_incremental() %}
    semi join touched
        on touched.model = answers.model and touched.condition = answers.condition and touched.visibility = answers.visibility
    {%- endif %}
),

final as (
    select
        cohort,
        model,
        condition,
        visibility,
        cast(count(*) as integer) as n_answers,
        cast(count(*) filter (where parse_status = 'truncated') as integer) as n_truncated,
        cast(count(*) filter (where parse_status = 'invalid') as integer) as n_invalid,
        cast(count(*) filter (where is_latest_in_cell) as integer) as n_in_use,
        cast(count(*) filter (where is_latest_in_cell and parse_status = 'truncated') as integer) as n_truncated_in_use,
        count(*) filter (where parse_status = 'truncated') / count(*) as truncation_rate,
        max(scored_at) as scored_through
    from answers
    group by cohort, model, condition, visibility
)

select * from final
