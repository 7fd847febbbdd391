-- Report, data quality: paired-condition questions without both a full and a masked answer, for every
-- cohort x model x prompt_variant that answered anything (a pair needs both to enter the paired metrics).
-- Counted per group, not per expected question: only the answered questions are matched to the
-- requests, so at 17.8 M answers no row per (question x model) that was not answered is made.
with requests as (
    select distinct cohort, question_id, condition, prompt_variant
    from {{ ref('fct_answer_requests') }}
    where condition <> '0'
),

requested as (
    select cohort, condition, prompt_variant, count(*) as n_requested
    from requests
    group by all
),

answering as (
    select distinct cohort, model, prompt_variant from {{ ref('agg_answer_provenance') }}
),

answered as (
    select
        question_id, model, condition, prompt_variant,
        bool_or(visibility = 'full') as has_full,
        bool_or(visibility = 'masked') as has_masked
    from {{ ref('fct_answers') }}
    where is_latest_in_cell and condition <> '0'
    group by all
),

answered_requests as (
    select
        requests.cohort, answered.model, requests.prompt_variant, requests.condition,
        count(*) filter (where answered.has_full and answered.has_masked) as n_paired,
        count(*) filter (where answered.has_full) as n_full,
        count(*) filter (where answered.has_masked) as n_masked
    from answered
    inner join requests
        on requests.question_id = answered.question_id
        and requests.condition = answered.condition
        and requests.prompt_variant = answered.prompt_variant
    group by all
)

select
    requested.cohort, answering.model, requested.prompt_variant, requested.condition,
    requested.n_requested as n_expected,
    coalesce(answered_requests.n_paired, 0) as n_paired,
    requested.n_requested - coalesce(answered_requests.n_full, 0) as n_missing_full,
    requested.n_requested - coalesce(answered_requests.n_masked, 0) as n_missing_masked
from requested
inner join answering
    on answering.cohort = requested.cohort and answering.prompt_variant = requested.prompt_variant
left join answered_requests
    on answered_requests.cohort = requested.cohort
    and answered_requests.model = answering.model
    and answered_requests.prompt_variant = requested.prompt_variant
    and answered_requests.condition = requested.condition
order by requested.cohort, answering.model, requested.prompt_variant, requested.condition
