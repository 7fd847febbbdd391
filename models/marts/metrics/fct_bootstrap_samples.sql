{{ config(materialized='view') }}
-- One row per cohort x replicate x drawn case: how many times replicate r of
-- the case-clustered bootstrap drew the case (multiplicity >= 1; undrawn
-- cases have no row). Identical to the weights ingest/stats/bootstrap.py uses for
-- agg_metrics; computed on demand (a view), for inspection and cross-checks.
with cases as (
    select * from {{ ref('int_bootstrap_cases') }}
),

cohorts as (
    select distinct cohort, n_cases, cohort_key from cases
),

cohort_stream_0 as (
    select cohort, n_cases, ({{ var('bootstrap_seed') }} % {{ bootstrap_prime() }} + cohort_key) % {{ bootstrap_prime() }} as h
    from cohorts
),

{{ bootstrap_mix_stages('cohort_stream', ['cohort', 'n_cases'], 2) }}

replicate_stream_0 as (
    select
        cohort_stream_2.cohort,
        cohort_stream_2.n_cases,
        replicates.replicate,
        (cohort_stream_2.h + replicates.replicate) % {{ bootstrap_prime() }} as h
    from cohort_stream_2
    -- an integer from the start (not cast at the end), so a filter on replicate reaches the draws
    cross join {{ range_relation(var('bootstrap_replicates'), 'replicate') }} as replicates
),

{{ bootstrap_mix_stages('replicate_stream', ['cohort', 'n_cases', 'replicate'], 2) }}

draw_0 as (
    select
        replicate_stream_2.cohort,
        replicate_stream_2.n_cases,
        replicate_stream_2.replicate,
        (replicate_stream_2.h + draws.draw) % {{ bootstrap_prime() }} as h
    from replicate_stream_2
    {{ lateral_range('replicate_stream_2.n_cases', 'draw', 'draws') }}
),

{{ bootstrap_mix_stages('draw', ['cohort', 'n_cases', 'replicate'], 4) }}

multiplicities as (
    select cohort, replicate, h % n_cases as case_index, count(*) as multiplicity
    from draw_4
    group by cohort, replicate, h % n_cases
),

final as (
    select
        multiplicities.cohort,
        multiplicities.replicate,
        cases.case_id,
        cast(multiplicities.multiplicity as integer) as multiplicity
    from multiplicities
    inner join cases
        on cases.cohort = multiplicities.cohort
        and cases.case_index = multiplicities.case_index
)

select * from final
