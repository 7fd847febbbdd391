{# The public columns of agg_metrics and its slices, typed for their contracts,
   from the rows of one grouping of a metric-estimates model. `slices` are the
   extra grain columns of a sliced mart. #}
{% macro select_metric_estimates(grouping, slices=[], relation='int_metric_estimates') %}
with estimates as (
    select * from {{ ref(relation) }}
    where grouping = '{{ grouping }}'
),

final as (
    select
        {%- for column in ['cohort', 'model', 'condition', 'prompt_variant', 'metric', 'visibility'] + slices %}
        cast({{ column }} as string) as {{ column }},
        {%- endfor %}
        cast(estimate as double) as estimate,
        cast(ci_low as double) as ci_low,
        cast(ci_high as double) as ci_high,
        cast(ci_method as string) as ci_method,
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
{% endmacro %}
