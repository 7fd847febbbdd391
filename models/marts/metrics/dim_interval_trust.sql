-- One row per interval method, kind of estimate and number of cases the coverage bench measured
-- (seed interval_coverage: bench/bench_coverage.py's table), with the band of case counts it stands
-- for and the method's min_cases: the smallest size from which the coverage stays at var
-- interval_min_coverage or above. Every interval over fewer cases is flagged few_cases, its caution
-- citing its band's coverage (macro select_metric_estimates; ingest/stats/trust.py for the slices,
-- which read this mart).
with coverage as (
    select
        cast(ci_method as string) as ci_method,
        cast(kind as string) as kind,
        cast(cases as integer) as cases,
        cast(mean_coverage as double) as mean_coverage
    from {{ ref('interval_coverage') }}
),

banded as (
    select
        *,
        lead(cases) over (partition by ci_method, kind order by cases) as below_cases,
        row_number() over (partition by ci_method, kind order by cases) = 1 as is_first
    from coverage
),

last_short as (
    -- the largest size whose coverage falls short: the method holds from the next size measured
    select
        ci_method,
        kind,
        max(case when mean_coverage < {{ var('interval_min_coverage') }} then cases end) as short_through
    from coverage
    group by ci_method, kind
),

thresholds as (
    select
        coverage.ci_method,
        coverage.kind,
        min(case when last_short.short_through is null or coverage.cases > last_short.short_through
            then coverage.cases end) as min_cases
    from coverage
    inner join last_short
        on last_short.ci_method = coverage.ci_method and last_short.kind = coverage.kind
    group by coverage.ci_method, coverage.kind
),

final as (
    select
        banded.ci_method,
        banded.kind,
        banded.cases,
        cast(case when banded.is_first then 2 else banded.cases end as integer) as from_cases,
        cast(banded.below_cases as integer) as below_cases,
        banded.mean_coverage,
        cast(thresholds.min_cases as integer) as min_cases,
        cast({{ var('interval_min_coverage') }} as double) as min_coverage
    from banded
    inner join thresholds
        on thresholds.ci_method = banded.ci_method and thresholds.kind = banded.kind
)

select * from final
