-- One row per case that has questions: the population the case-clustered
-- bootstrap resamples, per cohort, with the case's 0-based index in case_id
-- order and the cohort's size. Which models answered does not change it, so
-- draws stay the same as answers arrive.
with questions as (
    select distinct cohort, case_id from {{ ref('int_questions_positioned') }}
),

final as (
    select
        cohort,
        case_id,
        cast(row_number() over (partition by cohort order by case_id) - 1 as bigint) as case_index,
        cast(count(*) over (partition by cohort) as bigint) as n_cases,
        {{ bootstrap_cohort_key('cohort') }} as cohort_key
    from questions
)

select * from final
