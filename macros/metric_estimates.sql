{# The public columns of agg_metrics and its slices, typed for their contracts,
   from the rows of one grouping of a metric-estimates model. `slices` are the
   extra grain columns of a sliced mart.

   An interval over fewer cases than its method needs to cover 95% (dim_interval_trust: the coverage
   bench's table and its rule; ingest/stats/trust.py writes the same words for the slices) is
   flagged few_cases, with a one-line caution citing what the bench measured at its number of cases.
   A one-case cell has no case-clustered interval, SE or MDE (the estimator's are the one case's own:
   an interval of zero width, an SE of 0): NULL here, as `hindsight metrics` gives none. #}
{% macro select_metric_estimates(grouping, slices=[], relation='int_metric_estimates') %}
with estimates as (
    select
        *,
        case when visibility = 'paired' then 'paired' else 'single' end as trust_kind,
        n_cases >= 2 as has_interval
    from {{ ref(relation) }}
    where grouping = '{{ grouping }}'
),

flagged as (
    select
        estimates.*,
        case
            when estimates.n_cases < 1 then null
            when estimates.n_cases = 1 then '1 case: no case-clustered interval or SE (they need at least 2 cases)'
            when trust.ci_method is null
                then 'few cases (' || cast(estimates.n_cases as string) || '): the coverage bench has not measured '
                    || estimates.ci_method || ' intervals of this kind'
            when trust.min_cases is null or estimates.n_cases < trust.min_cases
                then 'few cases (' || cast(estimates.n_cases as string) || '): a ' || estimates.ci_method
                    || ' interval over ' || cast(trust.from_cases as string)
                    || case when trust.below_cases is null then ' or more'
                        else '-' || cast(trust.below_cases - 1 as string) end
                    || ' cases covered ' || cast(cast(round(trust.mean_coverage * 100) as integer) as string)
                    || '%, not 95%, in the coverage bench ('
                    || case when trust.min_cases is null then 'it holds at no size measured'
                        else 'it holds from ' || cast(trust.min_cases as string) end
                    || ')'
        end as caution
    from estimates
    left join {{ ref('dim_interval_trust') }} as trust
        on trust.ci_method = estimates.ci_method
        and trust.kind = estimates.trust_kind
        and estimates.n_cases >= trust.from_cases
        and (trust.below_cases is null or estimates.n_cases < trust.below_cases)
),

final as (
    select
        {%- for column in ['cohort', 'model', 'condition', 'prompt_variant', 'metric', 'visibility'] + slices %}
        cast({{ column }} as string) as {{ column }},
        {%- endfor %}
        cast(estimate as double) as estimate,
        cast(case when has_interval then ci_low end as double) as ci_low,
        cast(case when has_interval then ci_high end as double) as ci_high,
        cast(ci_method as string) as ci_method,
        coalesce(has_interval and (ci_low > 0 or ci_high < 0), false) as significant,
        caution is not null as few_cases,
        cast(caution as string) as caution,
        cast(case when has_interval then se_clustered end as double) as se_clustered,
        cast(case when visibility = 'paired' and has_interval then mde_80 end as double) as mde_80,
        cast(n_questions as integer) as n_questions,
        cast(n_cases as integer) as n_cases,
        cast(n_valid as integer) as n_valid,
        cast(n_valid as double) / n_questions as validity_rate,
        cast(n_finite_replicates as integer) as n_finite_replicates,
        cast(bootstrap_replicates as integer) as bootstrap_replicates,
        cast(bootstrap_seed as bigint) as bootstrap_seed
    from flagged
)

select * from final
{% endmacro %}
