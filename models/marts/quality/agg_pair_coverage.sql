-- One row per cohort x model x prompt_variant that answered anything, and paired condition (1.1 ...
-- 3.2): how many questions were requested for it (fct_answer_requests), how many of them the paired
-- metrics have a pair of (int_answer_pairs: some sample's newest full and masked answers), and how
-- many lack every full or every masked answer. The report's missing-pairs check reads it. Counted
-- per group, not per expected question: only answered questions are matched to the requests, so no
-- row per unanswered question x model is made (at 100x the paper's cases the check took 2.8-4.4 s
-- of the report when computed there).
--
-- Incremental: a model x prompt_variant is counted again when one of its answers was scored after
-- the newest score the table counted (scored_through); every one when the requests changed since
-- (requests_signature: their number and the order-free sum of their keys' hashes).
-- The signature and its comparison: macros/requests_signature.sql. The incremental pattern (stored
-- marks and fingerprint, changed keys, the same SQL over them, replaced whole):
-- docs/architecture.md#the-incremental-pattern.
{{ config(materialized=('table' if target.type == 'spark' else 'incremental'), unique_key=['model', 'prompt_variant'], incremental_strategy='delete+insert',
          on_schema_change='fail') }}
{%- set signature = requests_signature() %}
{#- only the groups with newer answers are counted again, when the requests are the ones stored #}
{%- set only_touched = requests_unchanged_since_stored(signature) %}
with requests as (
    select cohort, question_id, condition, prompt_variant
    from {{ ref('fct_answer_requests') }}
    where condition <> '0'
),

{%- if only_touched %}

touched as (
    {{ groups_scored_since_last_build(['model', 'prompt_variant']) }}
),
{%- endif %}

answers as {{ cte_materialized(false) }} (
    -- read by each of its readers for the columns it needs (materialised, it copied every column
    -- of 17.8 M answers at 100x the paper's cases: 2.1 of the model's 2.7 s)
    select answers.*, questions.cohort
    from {{ ref('int_answers_scored') }} as answers
    inner join {{ ref('int_questions_positioned') }} as questions on questions.question_id = answers.question_id
    {%- if only_touched %}
    semi join touched on touched.model = answers.model and touched.prompt_variant = answers.prompt_variant
    {%- endif %}
),

answering as (
    -- the cohorts each model x prompt_variant answered in (any condition), and its newest score
    select cohort, model, prompt_variant, max(scored_at) as scored_through
    from answers
    group by all
),

paired_conditions as (
    select condition from {{ ref('conditions') }} where is_paired
),

requested as (
    -- a question has a request per visibility (and per narrative model for 3.x)
    {%- if only_touched %}
    -- the requests did not change: their counts are stored, counted here only for a cohort and
    -- prompt_variant no model answered yet
    select distinct cohort, condition, prompt_variant, n_expected as n_requested from {{ this }}
    union all
    select cohort, condition, prompt_variant, count(distinct question_id) as n_requested
    from requests
    anti join (select distinct cohort, prompt_variant from {{ this }}) as counted using (cohort, prompt_variant)
    group by all
    {%- else %}
    select cohort, condition, prompt_variant, count(distinct question_id) as n_requested
    from requests
    group by all
    {%- endif %}
),

sampling as (
    {{ answers_have_samples() }}
),

newest as {{ cte_materialized(false) }} (
    -- the newest answers of the paired conditions, read by each of their readers for what it needs
    select * from answers where is_latest_in_cell and condition <> '0'
),

pair_rows as {{ cte_materialized(false) }} (
    select question_id, model, condition, prompt_variant
    from {{ ref('int_answer_pairs') }}
    {%- if only_touched %}
    semi join touched using (model, prompt_variant)
    {%- endif %}
),

pairs as (
    -- the questions the paired metrics have a pair of: with one sample each, a pair is one already
    select * from pair_rows where not (select sampling.has_samples from sampling)
    union all
    select distinct * from pair_rows where (select sampling.has_samples from sampling)
),

answered as (
    -- per answered question: whether it has a full and a masked answer. With one sample each a
    -- question has one newest answer a side, and its rows count as they are (at 100x the paper's
    -- cases grouping 16.4 M answers into 8.2 M questions was most of this model's time); a
    -- question's full row then stands for it in the pairs' count
    select
        cohort, question_id, model, condition, prompt_variant,
        bool_or(visibility = 'full') as has_full,
        bool_or(visibility = 'masked') as has_masked
    from newest
    where (select sampling.has_samples from sampling)
    group by all
    union all
    select
        cohort, question_id, model, condition, prompt_variant,
        visibility = 'full' as has_full,
        visibility = 'masked' as has_masked
    from newest
    where not (select sampling.has_samples from sampling)
),

answered_requests as (
    select
        answered.cohort, answered.model, answered.prompt_variant, answered.condition,
        count(pairs.question_id) filter (where answered.has_full) as n_paired,
        count(*) filter (where answered.has_full) as n_full,
        count(*) filter (where answered.has_masked) as n_masked
    from answered
    -- answered questions that were requested (the distinct questions answered first: the requests'
    -- 4 M rows at 100x are probed against them, not hashed)
    semi join (
        select distinct requests.question_id, requests.condition, requests.prompt_variant
        from requests
        semi join (select distinct question_id from newest) as asked using (question_id)
    ) as requested_answers
        on requested_answers.question_id = answered.question_id
        and requested_answers.condition = answered.condition
        and requested_answers.prompt_variant = answered.prompt_variant
    left join pairs
        on pairs.question_id = answered.question_id
        and pairs.model = answered.model
        and pairs.condition = answered.condition
        and pairs.prompt_variant = answered.prompt_variant
    group by all
),

final as (
    -- a row for every paired condition, requested or not (n_expected 0), so that every group
    -- counted holds its scored_through
    select
        answering.cohort,
        answering.model,
        answering.prompt_variant,
        paired_conditions.condition,
        cast(coalesce(requested.n_requested, 0) as integer) as n_expected,
        cast(coalesce(answered_requests.n_paired, 0) as integer) as n_paired,
        cast(coalesce(requested.n_requested, 0) - coalesce(answered_requests.n_full, 0) as integer) as n_missing_full,
        cast(coalesce(requested.n_requested, 0) - coalesce(answered_requests.n_masked, 0) as integer) as n_missing_masked,
        answering.scored_through,
        cast({{ "'" ~ signature ~ "'" if signature is not none else 'null' }} as string) as requests_signature
    from answering
    cross join paired_conditions
    left join requested
        on requested.cohort = answering.cohort
        and requested.prompt_variant = answering.prompt_variant
        and requested.condition = paired_conditions.condition
    left join answered_requests
        on answered_requests.cohort = answering.cohort
        and answered_requests.model = answering.model
        and answered_requests.prompt_variant = answering.prompt_variant
        and answered_requests.condition = paired_conditions.condition
)

select * from final
