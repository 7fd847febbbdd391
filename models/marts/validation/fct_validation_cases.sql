-- One row per case of each validation design's cohorts (paper Appendix G): its error-proneness
-- score, sampling weight, inclusion probability under the design, and whether (and in which half)
-- it was drawn.
with cases as (
    select * from {{ ref('stg_raw__validation_cases') }}
),

final as (
    select
        design_id,
        model,
        cohort,
        case_id,
        cast(eps as double) as eps,
        cast(inaccuracy as double) as eps_inaccuracy,
        cast(htr as double) as eps_htr,
        cast(air as double) as eps_air,
        cast(hbr as double) as eps_hbr,
        cast(weight as double) as weight,
        cast(inclusion_probability as double) as inclusion_probability,
        cast(inclusion_probability_se as double) as inclusion_probability_se,
        sampled,
        cast(half as integer) as half,
        cast(draw_order as integer) as draw_order
    from cases
)

select * from final
