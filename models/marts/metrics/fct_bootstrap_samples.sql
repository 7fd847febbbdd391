{{ config(materialized='view') }}
-- One row per cohort x replicate x drawn case: how many times replicate r of
-- the case-clustered bootstrap drew the case (multiplicity >= 1; undrawn
-- cases have no row). Identical to the weights ingest/stats/bootstrap.py uses for
-- agg_metrics; computed on demand (a view), for inspection and cross-checks.
with cases as (
    select * from {{ ref('int_bootstrap_cases') }}
),

cohorts as (
    select distinct cohort, n_cases, cohort_key as stream_key from cases
),

{{ bootstrap_multiplicities('draws', 'cohorts', ['cohort']) }},

final as (
    select
        multiplicities.cohort,
        multiplicities.replicate,
        cases.case_id,
        cast(multiplicities.multiplicity as integer) as multiplicity
    from draws_multiplicities as multiplicities
    inner join cases
        on cases.cohort = multiplicities.cohort
        and cases.case_index = multiplicities.case_index
)

select * from final
