{{ config(materialized='view') }}
-- One row per answer cell (cohort x model x condition x prompt_variant x
-- visibility x format x options_type) and case: sums, counts and valid counts
-- of Acc and HTR over the case's questions (each cell's newest answer). NULL
-- values (metric not defined for the eval_target, unjudged free response) do
-- not count. One pass over fct_answers; the bootstrap reads it.
with answers as (
    select * from {{ ref('fct_answers') }}
    where is_latest_in_cell
),

final as (
    select
        cohort,
        case_id,
        model,
        condition,
        prompt_variant,
        visibility,
        format,
        coalesce(options_type, '') as options_type,
        sum(acc) as acc_sum,
        count(acc) as acc_n,
        count(acc) filter (where parse_status <> 'invalid') as acc_valid,
        sum(htr) as htr_sum,
        count(htr) as htr_n,
        count(htr) filter (where parse_status <> 'invalid') as htr_valid
    from answers
    group by all
)

select * from final
