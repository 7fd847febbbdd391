-- One row per case of each validation design's cohorts, with the design's parameters (paper
-- Appendix G): EPS and its components, sampling weight, inclusion probability, sample and half.
with cases as (
    select * from {{ source('raw', 'validation_cases') }}
),

designs as (
    select * from {{ source('raw', 'validation_designs') }}
),

final as (
    select
        cases.design_id,
        designs.model,
        designs.fraction,
        designs.tau,
        designs.seed,
        designs.simulations,
        designs.created_at,
        cases.cohort,
        cases.case_id,
        cases.inaccuracy,
        cases.htr,
        cases.air,
        cases.hbr,
        cases.eps,
        cases.weight,
        cases.inclusion_probability,
        cases.inclusion_probability_se,
        cases.sampled,
        cases.half,
        cases.draw_order
    from cases
    inner join designs using (design_id)
)

select * from final
