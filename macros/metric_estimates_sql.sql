{# The metric estimator of ingest/stats/metric_estimates.py in SQL: the same rows as the Python
   models int_metric_estimates and int_metric_estimates_by_eval_target, from the same per-case sums
   (int_metric_case_sums) and the same bootstrap draws (fct_bootstrap_samples, the integers the
   Python estimator draws), so both engines give the same intervals. Spark builds it
   (models/intermediate/metrics/spark/); tests/dbt/assert_metric_estimates_sql_matches_python.sql
   compares it with the Python models on one DuckDB warehouse.

   A cell's estimate is sum_c S_c / sum_c N_c over its cases c (S: the sum of the values, N: the
   number of questions); replicate r weighs case c by its multiplicity w_rc. Every interval is a
   sum over cases and replicates:
   - percentile: the 2.5th and 97.5th percentiles of the finite replicate estimates (linear
     interpolation, as numpy);
   - bca: the percentiles at levels moved by the bias z0 (the share of replicates below the
     estimate) and the acceleration (the jackknife over the cell's cases);
   - studentized: the percentiles of the replicates' pivots (t* - t) / se*, se* Miller's clustered
     standard error within the replicate, turned around the estimate; the percentile limits where no
     replicate has a spread.

   LEAF names the finest grouping, with the extra grain columns SLICES; ROLLUPS ({name: columns})
   are coarser groupings of the same cells (the columns they leave out are NULL there). MAX_CASES
   keeps the cohorts of at most that many cases (the cross-check on DuckDB, where the case sums of a
   large cohort times every replicate would be a long join).
   Incremental (macro fact_config): the models whose case sums were summed since their estimates, or
   every model when the bootstrap settings changed, are estimated again (the table's partitions). #}
{% macro metric_estimates_sql(leaf, slices, rollups={}, max_cases=none) %}
{%- set cell = ['model', 'condition', 'prompt_variant', 'metric', 'visibility'] %}
{%- set labels = ['cohort'] + cell + slices %}
{%- set groupings = [(leaf, labels)] %}
{%- for name, columns in rollups.items() %}
    {%- do groupings.append((name, ['cohort'] + columns)) %}
{%- endfor %}
{%- set method = var('ci_method') %}
{%- if method not in ['percentile', 'bca', 'studentized'] %}
    {{ exceptions.raise_compiler_error("unknown ci_method '" ~ method ~ "': use one of percentile, bca, studentized") }}
{%- endif %}
with
{%- if is_incremental() %}
stored as (
    select model, max(scored_through) as scored_through from {{ this }} group by model
),

touched_models as (
    select sums.model
    from {{ ref('int_metric_case_sums') }} as sums
    left join stored on stored.model = sums.model
    group by sums.model
    having max(sums.scored_through) > coalesce(max(stored.scored_through), cast('1970-01-01' as timestamp))
    union
    select distinct model from {{ ref('int_metric_cells') }}
    where exists (
        select 1 from {{ this }}
        where bootstrap_replicates <> {{ var('bootstrap_replicates') }} or bootstrap_seed <> {{ var('bootstrap_seed') }}
            or ci_method <> '{{ method }}'
    )
),
{%- endif %}

case_values as (
    -- per grouping, cell and case: the sum of the values, the questions and the valid ones
    {%- for name, columns in groupings %}
    select
        '{{ name }}' as grouping,
        {%- for column in labels %}
        {{ ('cells.' ~ column) if column in columns else 'cast(null as string)' }} as {{ column }},
        {%- endfor %}
        sums.case_index,
        sum(sums.value_sum) as value_sum,
        sum(sums.n_questions) as n_questions,
        sum(sums.n_valid) as n_valid,
        max(sums.scored_through) as scored_through
    from {{ ref('int_metric_case_sums') }} as sums
    inner join {{ ref('int_metric_cells') }} as cells on cells.cell_key = sums.cell_key
    where true
    {%- if is_incremental() %}
        and cells.model in (select model from touched_models)
    {%- endif %}
    {%- if max_cases is not none %}
        and cells.cohort in (select cohort from {{ ref('int_bootstrap_cases') }} group by cohort having max(n_cases) <= {{ max_cases }})
    {%- endif %}
    group by {% for column in columns %}cells.{{ column }}, {% endfor %}sums.case_index
    {{- '\n    union all' if not loop.last }}
    {%- endfor %}
),

keyed as (
    select
        {{ hash64(['grouping', 'cohort'] + cell_label_keys(labels[1:])) }} as cell_id,
        *
    from case_values
),

cells as (
    select
        cell_id,
        {%- for column in ['grouping'] + labels %}
        any_value({{ column }}) as {{ column }},
        {%- endfor %}
        sum(value_sum) / sum(n_questions) as estimate,
        sum(n_questions) as n_questions,
        sum(value_sum) as value_total,
        count(*) as n_cases,
        sum(n_valid) as n_valid
    from keyed
    group by cell_id
),

case_deviations as (
    -- Miller's clustered SE: Var = sum_c (S_c - N_c * estimate)^2 / N^2
    select
        keyed.cell_id,
        sqrt(sum((keyed.value_sum - keyed.n_questions * cells.estimate) * (keyed.value_sum - keyed.n_questions * cells.estimate)))
            / any_value(cells.n_questions) as se_clustered
    from keyed
    inner join cells on cells.cell_id = keyed.cell_id
    group by keyed.cell_id
),

draws as (
    select samples.cohort, samples.replicate, cases.case_index, samples.multiplicity
    from {{ ref('fct_bootstrap_samples') }} as samples
    inner join {{ ref('int_bootstrap_cases') }} as cases
        on cases.cohort = samples.cohort and cases.case_id = samples.case_id
    where samples.cohort in (select distinct cohort from case_values)
),

replicate_sums as (
    -- replicates that drew none of a cell's cases have no row: their estimate is not finite
    select
        keyed.cell_id,
        draws.replicate,
        sum(draws.multiplicity * keyed.value_sum) as value_sum,
        sum(draws.multiplicity * keyed.n_questions) as n_questions
        {%- if method == 'studentized' %},
        sum(draws.multiplicity * keyed.value_sum * keyed.value_sum) as value_squares,
        sum(draws.multiplicity * keyed.value_sum * keyed.n_questions) as value_questions,
        sum(draws.multiplicity * keyed.n_questions * keyed.n_questions) as question_squares
        {%- endif %}
    from keyed
    inner join draws on draws.cohort = keyed.cohort and draws.case_index = keyed.case_index
    group by keyed.cell_id, draws.replicate
),

replicates as (
    select
        cell_id,
        replicate,
        value_sum / n_questions as replicate_estimate
        {%- if method == 'studentized' %},
        (value_squares - 2 * (value_sum / n_questions) * value_questions
            + (value_sum / n_questions) * (value_sum / n_questions) * question_squares) / (n_questions * n_questions)
            as replicate_variance
        {%- endif %}
    from replicate_sums
    where n_questions > 0
),

finite as (
    select cell_id, count(*) as n_finite_replicates
    from replicates
    group by cell_id
),
{%- if method == 'percentile' %}

levels as (
    select cell_id, cast(0.025 as double) as level_low, cast(0.975 as double) as level_high from cells
),
{{ interpolated_quantiles('replicates', 'replicate_estimate', 'levels', 'limits') }},
{%- elif method == 'bca' %}

bias as (
    select
        replicates.cell_id,
        -- a replicate within 1e-12 of the estimate is a tie (ingest/stats/intervals.py TIE)
        (count(*) filter (where replicates.replicate_estimate < cells.estimate
                                 and abs(replicates.replicate_estimate - cells.estimate) > 1e-12)
            + cast(0.5 as double) * count(*) filter (where abs(replicates.replicate_estimate - cells.estimate) <= 1e-12))
            / count(*) as share_below
    from replicates
    inner join cells on cells.cell_id = replicates.cell_id
    group by replicates.cell_id, cells.estimate
),

jackknife as (
    -- leave one case out: (S - S_c) / (N - N_c), over the cases where it is defined
    select keyed.cell_id, (cells.value_total - keyed.value_sum) / (cells.n_questions - keyed.n_questions) as estimate
    from keyed
    inner join cells on cells.cell_id = keyed.cell_id
    where cells.n_questions - keyed.n_questions > 0
),

jackknife_deviations as (
    select cell_id, avg(estimate) over (partition by cell_id) - estimate as deviation
    from jackknife
),

acceleration as (
    select
        cells.cell_id,
        coalesce(case when sum(deviations.deviation * deviations.deviation) > 0
            then sum(deviations.deviation * deviations.deviation * deviations.deviation)
                / (6 * power(sum(deviations.deviation * deviations.deviation), cast(1.5 as double))) end, cast(0 as double)) as acceleration
    from cells
    left join jackknife_deviations as deviations on deviations.cell_id = cells.cell_id
    group by cells.cell_id
),

bias_z as (
    select bias.cell_id, {{ normal_quantile('bias.share') }} as z0, acceleration.acceleration
    from (select cell_id, least(greatest(share_below, 1e-6), 1 - 1e-6) as share from bias) as bias
    inner join acceleration on acceleration.cell_id = bias.cell_id
),

adjusted as (
    select
        cell_id,
        z0 + (z0 + {{ normal_quantile('0.025') }}) / (1 - acceleration * (z0 + {{ normal_quantile('0.025') }})) as z_low,
        z0 + (z0 + {{ normal_quantile('0.975') }}) / (1 - acceleration * (z0 + {{ normal_quantile('0.975') }})) as z_high
    from bias_z
),

levels as (
    select cell_id, {{ normal_cdf('z_low') }} as level_low, {{ normal_cdf('z_high') }} as level_high
    from adjusted
),
{{ interpolated_quantiles('replicates', 'replicate_estimate', 'levels', 'limits') }},
{%- else %}

pivots as (
    select replicates.cell_id, (replicates.replicate_estimate - cells.estimate) / sqrt(replicates.replicate_variance) as pivot_value
    from replicates
    inner join cells on cells.cell_id = replicates.cell_id
    where replicates.replicate_variance > 0
),

levels as (
    select cell_id, cast(0.025 as double) as level_low, cast(0.975 as double) as level_high from cells
),
{{ interpolated_quantiles('pivots', 'pivot_value', 'levels', 'pivot_limits') }},
{{ interpolated_quantiles('replicates', 'replicate_estimate', 'levels', 'percentile_limits') }},

limits as (
    -- turned around the estimate; the percentile limits where nothing has a spread to pivot by
    select
        cells.cell_id,
        case when pivot_limits.quantile_low is not null and pivot_limits.quantile_high is not null and case_deviations.se_clustered > 0
            then cells.estimate - pivot_limits.quantile_high * case_deviations.se_clustered
            else percentile_limits.quantile_low end as quantile_low,
        case when pivot_limits.quantile_low is not null and pivot_limits.quantile_high is not null and case_deviations.se_clustered > 0
            then cells.estimate - pivot_limits.quantile_low * case_deviations.se_clustered
            else percentile_limits.quantile_high end as quantile_high
    from cells
    inner join case_deviations on case_deviations.cell_id = cells.cell_id
    left join pivot_limits on pivot_limits.cell_id = cells.cell_id
    left join percentile_limits on percentile_limits.cell_id = cells.cell_id
),
{%- endif %}

final as (
    select
        cells.grouping,
        {%- for column in labels %}
        {{ "nullif(cells.options_type, '')" if column == 'options_type' else 'cells.' ~ column }} as {{ column }},
        {%- endfor %}
        cells.estimate,
        limits.quantile_low as ci_low,
        limits.quantile_high as ci_high,
        case_deviations.se_clustered,
        -- (z_0.975 + z_0.8) se: ingest/stats/bootstrap.py's constants
        (cast(1.959963984540054 as double) + cast(0.8416212335729143 as double)) * case_deviations.se_clustered as mde_80,
        cast(cells.n_questions as bigint) as n_questions,
        cast(cells.n_cases as bigint) as n_cases,
        cast(cells.n_valid as bigint) as n_valid,
        cast(coalesce(finite.n_finite_replicates, 0) as bigint) as n_finite_replicates,
        {{ var('bootstrap_replicates') }} as bootstrap_replicates,
        {{ var('bootstrap_seed') }} as bootstrap_seed,
        '{{ method }}' as ci_method,
        (select max(scored_through) from case_values) as scored_through
    from cells
    inner join case_deviations on case_deviations.cell_id = cells.cell_id
    left join limits on limits.cell_id = cells.cell_id
    left join finite on finite.cell_id = cells.cell_id
)

select * from final
{% endmacro %}

{#- A cell's label columns for its key: NULL (a rollup's missing column) apart from '' -#}
{% macro cell_label_keys(columns) -%}
    {%- set keys = [] %}
    {%- for column in columns %}
        {%- do keys.append("coalesce(" ~ column ~ ", '<null>')") %}
    {%- endfor %}
    {{- return(keys) }}
{%- endmacro %}

{#- CTE NAME: per cell_id, the quantiles at levels level_low and level_high (of relation LEVELS) of
    column VALUE of RELATION: numpy's linear interpolation between the order statistics below and
    above position level * (n - 1) of the n values (NULL where a cell has none). -#}
{% macro interpolated_quantiles(relation, value, levels, name) -%}
{{ name }}_ranked as (
    select
        cell_id,
        {{ value }} as value,
        row_number() over (partition by cell_id order by {{ value }}) - 1 as position,
        count(*) over (partition by cell_id) as n_values
    from {{ relation }}
),

{{ name }}_positions as (
    select
        counts.cell_id,
        {%- for side in ['low', 'high'] %}
        least(greatest(levels.level_{{ side }}, 0.0), 1.0) * (counts.n_values - 1) as position_{{ side }},
        floor(least(greatest(levels.level_{{ side }}, 0.0), 1.0) * (counts.n_values - 1)) as below_{{ side }},
        {%- endfor %}
        counts.n_values
    from (select cell_id, count(*) as n_values from {{ relation }} group by cell_id) as counts
    inner join {{ levels }} as levels on levels.cell_id = counts.cell_id
),

{{ name }} as (
    select
        positions.cell_id,
        {%- for side in ['low', 'high'] %}
        max(case when ranked.position = positions.below_{{ side }} then ranked.value end)
            + (any_value(positions.position_{{ side }}) - any_value(positions.below_{{ side }}))
            * (max(case when ranked.position = least(positions.below_{{ side }} + 1, positions.n_values - 1) then ranked.value end)
               - max(case when ranked.position = positions.below_{{ side }} then ranked.value end)) as quantile_{{ side }}
        {{- ',' if not loop.last }}
        {%- endfor %}
    from {{ name }}_positions as positions
    inner join {{ name }}_ranked as ranked on ranked.cell_id = positions.cell_id
    group by positions.cell_id
)
{%- endmacro %}
