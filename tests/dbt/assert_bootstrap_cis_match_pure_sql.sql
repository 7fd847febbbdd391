-- Assert that agg_metrics' bootstrap intervals equal a pure-SQL recomputation from the draws in
-- fct_bootstrap_samples (replicate estimate = sum of multiplicity x case sums / sum of multiplicity
-- x case counts; linear-interpolated 2.5/97.5 percentiles), and its estimates the plain mean.
-- Checked on cohorts of at most var('bootstrap_sql_check_max_cases') cases, where the joins are cheap;
-- the interval check holds for ci_method percentile (the other methods are checked in
-- tests/python/test_intervals.py from the same replicates). With no such cohort nothing is drawn (the
-- view of the draws would make every replicate of the large cohorts only to filter them out).
-- Two implementations of one computation agreeing is a check of the code, not of the data: tagged
-- `equivalence`, it runs in the test suite and CI, not in refreshes (selectors.yml, ingest/build.py).
{{ config(tags=['equivalence']) }}
{%- set any_small = true %}
{%- if execute and load_relation(ref('int_bootstrap_cases')) is not none %}
    {%- set found = run_query("select count(*) from (select cohort from " ~ ref('int_bootstrap_cases')
        ~ " group by cohort having max(n_cases) <= " ~ var('bootstrap_sql_check_max_cases') ~ ")") %}
    {%- set any_small = found.columns[0].values()[0] > 0 %}
{%- endif %}
{%- if not any_small %}
select * from {{ ref('agg_metrics') }} where false
{%- else %}
with small_cohorts as (
    select cohort from {{ ref('int_bootstrap_cases') }}
    group by cohort
    having max(n_cases) <= {{ var('bootstrap_sql_check_max_cases') }}
),

small_cells as (
    select * from {{ ref('int_metric_cells') }}
    where cohort in (select small_cohorts.cohort from small_cohorts)
),

case_sums as (
    select cells.cohort, cells.model, cells.condition, cells.prompt_variant, cells.metric, cells.visibility, cases.case_id,
        sum(sums.value_sum) as value_sum, sum(sums.n_questions) as n_questions
    from {{ ref('int_metric_case_sums') }} as sums
    inner join small_cells as cells on cells.cell_key = sums.cell_key
    inner join {{ ref('int_bootstrap_cases') }} as cases
        on cases.cohort = cells.cohort and cases.case_index = sums.case_index
    group by all
),

replicate_estimates as (
    select
        case_sums.cohort, case_sums.model, case_sums.condition, case_sums.prompt_variant,
        case_sums.metric, case_sums.visibility, samples.replicate,
        sum(samples.multiplicity * case_sums.value_sum)
            / nullif(sum(samples.multiplicity * case_sums.n_questions), 0) as estimate
    from case_sums
    inner join (
        select * from {{ ref('fct_bootstrap_samples') }}
        where cohort in (select small_cohorts.cohort from small_cohorts)
    ) as samples
        on samples.cohort = case_sums.cohort and samples.case_id = case_sums.case_id
    group by all
),

recomputed as (
    select
        replicate_estimates.cohort, replicate_estimates.model, replicate_estimates.condition,
        replicate_estimates.prompt_variant, replicate_estimates.metric, replicate_estimates.visibility,
        {{ quantile_linear('replicate_estimates.estimate', 0.025) }} as ci_low,
        {{ quantile_linear('replicate_estimates.estimate', 0.975) }} as ci_high
    from replicate_estimates
    group by all
),

point_estimates as (
    select cohort, model, condition, prompt_variant, metric, visibility,
        sum(value_sum) / sum(n_questions) as estimate
    from case_sums
    group by all
)

select metrics.cohort, metrics.model, metrics.condition, metrics.metric, metrics.visibility,
    metrics.estimate, point_estimates.estimate as sql_estimate,
    metrics.ci_low, recomputed.ci_low as sql_ci_low, metrics.ci_high, recomputed.ci_high as sql_ci_high
from {{ ref('agg_metrics') }} as metrics
inner join point_estimates using (cohort, model, condition, prompt_variant, metric, visibility)
left join recomputed using (cohort, model, condition, prompt_variant, metric, visibility)
where abs(metrics.estimate - point_estimates.estimate) > 1e-9
   -- a one-case cell has no interval (the draws' would be the one case's value, of zero width)
   or (metrics.n_cases < 2 and (metrics.ci_low is not null or metrics.ci_high is not null))
   or (metrics.ci_method = 'percentile' and metrics.n_cases >= 2 and (
       recomputed.ci_low is null
       or abs(metrics.ci_low - recomputed.ci_low) > 1e-9
       or abs(metrics.ci_high - recomputed.ci_high) > 1e-9))
{%- endif %}
