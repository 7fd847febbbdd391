-- One row per cohort x model x condition x prompt_variant x metric x
-- visibility: the paper's metrics (Acc, HTR per visibility; dAcc, dHTR, AIR,
-- HBR paired) with case-clustered bootstrap 95% CIs, Miller's clustered
-- standard error and, for paired metrics, the minimum detectable effect.
with estimates as (
    select * from {{ ref('agg_metric_estimates') }}
    where grouping = 'overall'
),

final as (
    select
        cast(cohort as varchar) as cohort,
        cast(model as varchar) as model,
        cast(condition as varchar) as condition,
        cast(prompt_variant as varchar) as prompt_variant,
        cast(metric as varchar) as metric,
        cast(visibility as varchar) as visibility,
        cast(estimate as double) as estimate,
        cast(ci_low as double) as ci_low,
        cast(ci_high as double) as ci_high,
        coalesce(ci_low > 0 or ci_high < 0, false) as significant,
        cast(se_clustered as double) as se_clustered,
        cast(case when visibility = 'paired' then mde_80 end as double) as mde_80,
        cast(n_questions as integer) as n_questions,
        cast(n_cases as integer) as n_cases,
        cast(n_valid as integer) as n_valid,
        cast(n_valid as double) / n_questions as validity_rate,
        cast(n_finite_replicates as integer) as n_finite_replicates,
        cast(bootstrap_replicates as integer) as bootstrap_replicates,
        cast(bootstrap_seed as bigint) as bootstrap_seed
    from estimates
)

select * from final
