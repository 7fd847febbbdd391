-- Report, data quality: paired-condition questions without both a full and a masked answer, for every
-- cohort x model x prompt_variant that answered anything (a pair needs both to enter the paired metrics).
with requests as (
    select distinct cohort, question_id, condition, prompt_variant
    from {{ ref('fct_answer_requests') }}
    where condition <> '0'
),

answering as (
    select distinct cohort, model, prompt_variant from {{ ref('fct_answers') }}
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

expected as (
    select requests.*, answering.model
    from requests
    inner join answering
        on answering.cohort = requests.cohort and answering.prompt_variant = requests.prompt_variant
)

select
    expected.cohort, expected.model, expected.prompt_variant, expected.condition,
    count(*) as n_expected,
    count(*) filter (where answered.has_full and answered.has_masked) as n_paired,
    count(*) filter (where not coalesce(answered.has_full, false)) as n_missing_full,
    count(*) filter (where not coalesce(answered.has_masked, false)) as n_missing_masked
from expected
left join answered
    on answered.question_id = expected.question_id
    and answered.model = expected.model
    and answered.condition = expected.condition
    and answered.prompt_variant = expected.prompt_variant
group by all
order by expected.cohort, expected.model, expected.prompt_variant, expected.condition
