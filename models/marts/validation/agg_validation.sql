-- Table G.1 (paper Appendix G), one row per design x cohort (each, and 'all') x item x statistic,
-- with case-clustered bootstrap intervals (the paper gave none for its weighted estimates).
with agreement as (
    select * from {{ ref('int_validation_agreement') }}
),

final as (
    select
        cast(design_id as string) as design_id,
        cast(cohort as string) as cohort,
        cast(item as string) as item,
        cast(judge_model as string) as judge_model,
        cast(statistic as string) as statistic,
        cast(estimate as double) as estimate,
        cast(ci_low as double) as ci_low,
        cast(ci_high as double) as ci_high,
        cast(n_questions as integer) as n_questions,
        cast(n_cases as integer) as n_cases,
        cast(n_assessments as integer) as n_assessments,
        cast(n_finite_replicates as integer) as n_finite_replicates,
        cast(bootstrap_replicates as integer) as bootstrap_replicates
    from agreement
)

select * from final
