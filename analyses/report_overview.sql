-- Report, overview: per cohort, the cases, questions, answering models and stored answers.
with cases as (
    select cohort, count(*) as n_cases from {{ ref('dim_cases') }} group by cohort
),

questions as (
    select cohort, count(*) as n_questions from {{ ref('dim_questions') }} group by cohort
),

answers as (
    -- the answers the metrics use (the newest of each cell), counted by the completion mart
    select cohort, count(distinct model) filter (where n_in_use > 0) as n_models, cast(sum(n_in_use) as bigint) as n_answers
    from {{ ref('agg_answer_completion') }}
    group by cohort
)

select
    cases.cohort,
    cases.n_cases,
    coalesce(questions.n_questions, 0) as n_questions,
    coalesce(answers.n_models, 0) as n_models,
    coalesce(answers.n_answers, 0) as n_answers
from cases
left join questions on questions.cohort = cases.cohort
left join answers on answers.cohort = cases.cohort
order by cases.cohort
