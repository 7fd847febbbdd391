{# The metric estimates on Spark: the rows of the Python models int_metric_estimates and
   int_metric_estimates_by_eval_target, by the same estimator (ingest/stats/metric_estimates.py
   block_estimates: bootstrap.cell_statistics), run on the executors as the table function
   hindsight_metric_intervals (ingest/spark/functions.py) that `hindsight build --target spark`
   registers.

   SQL sums the per-case sums (int_metric_case_sums) to every grouping's cells: LEAF names the finest,
   with the extra grain columns SLICES; ROLLUPS ({name: columns}) are coarser groupings of the same
   cells (the columns they leave out are NULL there), summed per case here, so each is a cell of its
   own. The cells of a cohort are dealt into blocks (cell_block); one task per cohort and block gets
   its cells' per-case sums, draws the replicates again a block at a time from the counter-based
   draws (the integers of fct_bootstrap_samples) and returns each cell's estimate, interval and
   clustered SE. No relation has cells x cases x replicates rows, and a task's memory is set by its
   blocks: var bootstrap_block_memory_mb, from which the numbers of cells and replicates in a block
   follow (or bootstrap_cells_per_block / bootstrap_replicates_per_block, when set above 0). The block
   sizes change no number.

   Incremental (macro fact_config): the models whose case sums were summed since their estimates, or
   every model when the bootstrap settings changed, are estimated again (the table's partitions). #}
{% macro metric_estimates_spark(leaf, slices, rollups={}) %}
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

cell_labels as (
    -- per grouping, each finest cell (int_metric_cells: a few thousand rows) and the cell it sums into
    {%- for name, columns in groupings %}
    {%- set keys = ["'" ~ name ~ "'", 'cells.cohort'] %}
    {%- for column in labels[1:] %}
        {%- do keys.append("coalesce(cells." ~ column ~ ", '<null>')" if column in columns else "'<null>'") %}
    {%- endfor %}
    select
        cells.cell_key,
        '{{ name }}' as grouping,
        {%- for column in labels %}
        {{ ('cells.' ~ column) if column in columns else 'cast(null as string)' }} as {{ column }},
        {%- endfor %}
        {{ hash64(keys) }} as cell_id
    from {{ ref('int_metric_cells') }} as cells
    {%- if is_incremental() %}
    where cells.model in (select model from touched_models)
    {%- endif %}
    {{- '\n    union all' if not loop.last }}
    {%- endfor %}
),

cells as (
    select
        cell_id,
        {%- for column in ['grouping'] + labels %}
        any_value({{ column }}) as {{ column }}{{ ',' if not loop.last }}
        {%- endfor %}
    from cell_labels
    group by cell_id
),

cell_blocks as (
    -- a block holds as many of a cohort's cells as fit the memory of a task: per cell its per-case
    -- sums as they arrive and as matrices (13 doubles a case) and its replicates' sums (5 a replicate)
    select
        cells.cell_id,
        sizes.n_cases,
        floor((row_number() over (partition by cells.cohort order by cells.cell_id) - 1) / {{ cells_per_block() }}) as cell_block
    from cells
    inner join (select cohort, max(n_cases) as n_cases from {{ ref('int_bootstrap_cases') }} group by cohort) as sizes
        on sizes.cohort = cells.cohort
),

blocked_sums as (
    -- the one pass over the case sums: per cell of every grouping and case, its sums
    select
        labels.cohort,
        blocks.cell_block,
        any_value(blocks.n_cases) as n_cases,
        labels.cell_id,
        sums.case_index,
        cast(sum(sums.value_sum) as double) as value_sum,
        cast(sum(sums.n_questions) as double) as n_questions,
        cast(sum(sums.n_valid) as double) as n_valid
    from {{ ref('int_metric_case_sums') }} as sums
    inner join cell_labels as labels on labels.cell_key = sums.cell_key
    inner join cell_blocks as blocks on blocks.cell_id = labels.cell_id
    group by labels.cohort, blocks.cell_block, labels.cell_id, sums.case_index
),

estimates as (
    select *
    from hindsight_metric_intervals(
        TABLE(blocked_sums) PARTITION BY (cohort, cell_block),
        {{ var('bootstrap_seed') }}, {{ var('bootstrap_replicates') }}, '{{ method }}',
        {{ var('bootstrap_replicates_per_block') }}, {{ var('bootstrap_block_memory_mb') }})
),

final as (
    select
        cells.grouping,
        {%- for column in labels %}
        {{ "nullif(cells.options_type, '')" if column == 'options_type' else 'cells.' ~ column }} as {{ column }},
        {%- endfor %}
        estimates.estimate,
        estimates.ci_low,
        estimates.ci_high,
        estimates.se_clustered,
        -- (z_0.975 + z_0.8) se: ingest/stats/bootstrap.py's constants
        (cast(1.959963984540054 as double) + cast(0.8416212335729143 as double)) * estimates.se_clustered as mde_80,
        cast(estimates.n_questions as bigint) as n_questions,
        estimates.n_cases,
        cast(estimates.n_valid as bigint) as n_valid,
        estimates.n_finite_replicates,
        {{ var('bootstrap_replicates') }} as bootstrap_replicates,
        {{ var('bootstrap_seed') }} as bootstrap_seed,
        '{{ method }}' as ci_method,
        (select max(scored_through) from {{ ref('int_metric_case_sums') }}
         {%- if is_incremental() %} where model in (select model from touched_models){% endif %}) as scored_through
    from cells
    inner join estimates on estimates.cell_id = cells.cell_id
)

select * from final
{% endmacro %}

{#- Cells in a block: bootstrap_cells_per_block, or as many as bootstrap_block_memory_mb holds
    (sizes.n_cases: the cohort's cases; at most 1,024, so a block's replicate sums stay small) -#}
{% macro cells_per_block() -%}
    {%- if var('bootstrap_cells_per_block') | int > 0 -%}
        {{ var('bootstrap_cells_per_block') | int }}
    {%- else -%}
        greatest(1, least(1024, floor({{ var('bootstrap_block_memory_mb') | int }} * 1048576.0
            / (8 * (13 * sizes.n_cases + 5 * {{ var('bootstrap_replicates') }})))))
    {%- endif -%}
{%- endmacro %}
