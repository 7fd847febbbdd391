-- One row per metric cell (cohort x model x condition x prompt_variant x
-- metric x visibility x format x options_type) and case: the case's sum of
-- values and numbers of questions (all, valid). The bootstrap resamples
-- these per-case sums; coarser cells are sums of finer ones.
with metric_values as (
    select * from {{ ref('int_metric_values') }}
),

final as (
    select
        cohort,
        model,
        condition,
        prompt_variant,
        metric,
        visibility,
        format,
        coalesce(options_type, '') as options_type,
        case_id,
        sum(value) as value_sum,
        count(*) as n_questions,
        count(*) filter (where is_valid) as n_valid
    from metric_values
    group by all
)

select * from final
