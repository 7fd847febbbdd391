-- One row per cohort x model x condition x visibility: how many stored replies ended on the token
-- limit (truncated), counted apart from answers that did not parse, how many of the answers the
-- metrics use are still truncated (`hindsight answer --retry-truncated --max-tokens N` re-asks
-- those), and how many requests could not be answered at all: beyond the server's context window
-- (context_overflow) or answered to a prompt the server shortened (prompt_truncated).
--
-- Incremental: the rows of a model x condition x visibility are counted again when one of its answers
-- was scored after the newest score the table counted (scored_through), or when it has a lost request
-- (few, and a retry can answer one without a new score in its group); a cell lies within one such
-- group, so an answer that stops being its cell's newest is counted again with the new one.
-- The incremental pattern (stored marks and fingerprint, changed keys, the same SQL over them,
-- replaced whole): docs/architecture.md#the-incremental-pattern.
{{ config(materialized=('table' if target.type == 'spark' else 'incremental'), unique_key=['model', 'condition', 'visibility'],
          incremental_strategy='delete+insert',
          on_schema_change='fail') }}
with lost as (
    select * from {{ ref('int_answer_requests_lost') }}
),

{%- if is_incremental() %}

touched as (
    {{ groups_scored_since_last_build(['model', 'condition', 'visibility']) }}
    union
    select distinct model, condition, visibility from lost
    union
    -- a group whose lost requests were all answered since: its stored counts go
    select distinct model, condition, visibility from {{ this }} where n_context_overflow + n_prompt_truncated > 0
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

answered as (
    select
        cohort,
        model,
        condition,
        visibility,
        count(*) as n_answers,
        count(*) filter (where parse_status = 'truncated') as n_truncated,
        count(*) filter (where parse_status = 'invalid') as n_invalid,
        count(*) filter (where is_latest_in_cell) as n_in_use,
        count(*) filter (where is_latest_in_cell and parse_status = 'truncated') as n_truncated_in_use,
        max(scored_at) as scored_through
    from answers
    group by cohort, model, condition, visibility
),

unanswerable as (
    select
        cohort,
        model,
        condition,
        visibility,
        count(*) filter (where lost_to = 'context_overflow') as n_context_overflow,
        count(*) filter (where lost_to = 'prompt_truncated') as n_prompt_truncated
    from lost
    group by cohort, model, condition, visibility
),

final as (
    select
        coalesce(answered.cohort, unanswerable.cohort) as cohort,
        coalesce(answered.model, unanswerable.model) as model,
        coalesce(answered.condition, unanswerable.condition) as condition,
        coalesce(answered.visibility, unanswerable.visibility) as visibility,
        cast(coalesce(answered.n_answers, 0) as integer) as n_answers,
        cast(coalesce(answered.n_truncated, 0) as integer) as n_truncated,
        cast(coalesce(answered.n_invalid, 0) as integer) as n_invalid,
        cast(coalesce(answered.n_in_use, 0) as integer) as n_in_use,
        cast(coalesce(answered.n_truncated_in_use, 0) as integer) as n_truncated_in_use,
        case when answered.n_answers > 0 then answered.n_truncated / answered.n_answers end as truncation_rate,
        cast(coalesce(unanswerable.n_context_overflow, 0) as integer) as n_context_overflow,
        cast(coalesce(unanswerable.n_prompt_truncated, 0) as integer) as n_prompt_truncated,
        coalesce(answered.scored_through, cast('1970-01-01' as {{ 'timestamp_ntz' if target.type == 'spark' else 'timestamp' }})) as scored_through
    from answered
    full outer join unanswerable
        on unanswerable.cohort = answered.cohort
        and unanswerable.model = answered.model
        and unanswerable.condition = answered.condition
        and unanswerable.visibility = answered.visibility
)

select * from final
