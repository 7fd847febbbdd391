-- One row per metric cell at the finest grain (cohort x model x condition x prompt_variant x
-- metric x visibility x format x options_type x eval_target; its labels in int_metric_cells) and
-- case: the case's sum of question-level values and its numbers of questions (all, valid). A
-- question's value is the mean over its samples (`--samples N`; with one sample, the answer's own
-- value), and it counts as valid when every sample is. NULL values (metric not defined for the
-- eval_target, unjudged free response) do not count. The one definition of per-case sums: the
-- bootstrap estimator (ingest/stats/metric_estimates.py) sums it to its leaf grain, and the
-- pure-SQL cross-check of the intervals reads it too. Only numbers are stored (a cell key and the
-- case's index in int_bootstrap_cases): at 100x the paper's cases it has 34 M rows.
--
-- Incremental: a build recomputes the rows of the answer cells (model x condition x
-- prompt_variant x visibility; 'paired' for pairs) with an answer or pair scored since the newest
-- one it summed (scored_through), and every row when the cases' numbering or DuckDB's hash changed
-- (keyed_by). `hindsight build --full-refresh` rebuilds it from scratch. On Spark the rows of the
-- models with such an answer or pair are recomputed (the table's partitions, by model).
-- The incremental pattern (stored marks and fingerprint, changed keys, the same SQL over them,
-- replaced whole): docs/architecture.md#the-incremental-pattern.
{{ config(**fact_config('answer_cell_key')) }}
{#- Spark partitions the table by model (macro fact_config): the rows carry it there #}
{%- set partition = ['model'] if target.type == 'spark' else [] %}
with keying as (
    -- what the keys mean: the case numbering and the hash they were computed under
    select md5(version() || {{ ordered_string_agg("cohort || '|' || case_id || '|' || case_index", "','", 'cohort, case_index') }})
        as keyed_by
    from {{ ref('int_bootstrap_cases') }}
),

questions as (
    select
        questions.question_id,
        {{ metric_slice_key('questions.cohort', 'questions.format', 'questions.options_type', 'questions.eval_target') }}
            as slice_key,
        cast(cases.case_index as integer) as case_index,
        -- whether another question of the case falls in the same slice: only those need summing
        count(*) over (
            partition by questions.cohort, cases.case_index,
                {{ metric_slice_key('questions.cohort', 'questions.format', 'questions.options_type', 'questions.eval_target') }}
        ) > 1 as shares_slice
    from {{ ref('int_questions_positioned') }} as questions
    inner join {{ ref('int_bootstrap_cases') }} as cases
        on cases.cohort = questions.cohort and cases.case_id = questions.case_id
),

{#- each source's rows (a where clause that conditions follow), the key of their answer cell and when
    they count as valid: read where they are used (a CTE read twice is materialised: 17.8 M rows at
    100x the paper's cases) #}
{%- set sources = {
    'answers': {
        'relation': ref('int_answers_scored'), 'where': 'is_latest_in_cell',
        'cell': metric_answer_cell_key('model', 'condition', 'prompt_variant', 'visibility'),
        'is_valid': "parse_status not in ('invalid', 'truncated')",
        'metrics': ['acc', 'htr']},
    'pairs': {
        'relation': ref('int_answer_pairs'), 'where': 'true',
        'cell': metric_answer_cell_key('model', 'condition', 'prompt_variant', "'paired'"),
        'is_valid': 'both_valid',
        'metrics': ['delta_acc', 'delta_htr', 'air', 'hbr']}} %}
{%- for source in sources.values() %}
    {%- do source.update({'rows': 'from ' ~ source.relation ~ ' where ' ~ source.where}) %}
{%- endfor %}

sampling as (
    -- pairs pair samples of answers: a warehouse without samples has none in its pairs either
    {{ answers_have_samples() }}
),

{%- if is_incremental() and target.type == 'spark' %}

stored as (
    -- the keying joined, not a subquery inside the aggregate (Spark's analyzer refuses that)
    select stored_rows.model, max(stored_rows.scored_through) as scored_through,
        bool_or(stored_rows.keyed_by <> keying.keyed_by) as rekeyed
    from {{ this }} as stored_rows
    cross join keying
    group by stored_rows.model
),

touched_models as (
    {%- for source in sources.values() %}
    select scored.model
    from {{ source.relation }} as scored
    left join stored on stored.model = scored.model
    where {{ 'scored.' if source.where != 'true' }}{{ source.where }}
    group by scored.model
    having max(scored.scored_at) > coalesce(max(stored.scored_through), cast('1970-01-01' as timestamp))
        or coalesce(bool_or(stored.rekeyed), false)
    {{- '
    union' if not loop.last }}
    {%- endfor %}
),
{%- elif is_incremental() %}

stored as (
    select
        coalesce(max(scored_through), '1970-01-01') as scored_through,
        coalesce(bool_or(keyed_by <> (select keyed_by from keying)), false) as rekeyed
    from {{ this }}
),

touched as (
    {%- for source in sources.values() %}
    select {{ source.cell }} as answer_cell_key
    {{ source.rows }} and (scored_at > (select scored_through from stored) or (select rekeyed from stored))
    {{- '\n    union' if not loop.last }}
    {%- endfor %}
),
{%- endif %}
{%- for name, source in sources.items() %}
{%- if is_incremental() and target.type == 'spark' %}
{%- set rows = source.rows ~ ' and model in (select model from touched_models)' %}
{%- else %}
{%- set rows = source.rows ~ (' and ' ~ source.cell ~ ' in (select answer_cell_key from touched)' if is_incremental() else '') %}
{%- endif %}

{{ name }} as {{ cte_materialized(is_incremental()) }} (
    -- a question's value: the mean over its samples, valid when every sample is; with one sample
    -- each (no sample index above 0) a row is its question's value and the group by is skipped.
    -- Read twice below: a full build reads the table twice rather than copy every row; an
    -- incremental one copies the few touched rows once rather than filter the whole table twice
    select
        question_id,
        {{ source.cell }} as answer_cell_key,
        {%- for column in partition %}
        {{ column }},
        {%- endfor %}
        {%- for metric in source.metrics %}
        avg({{ metric }}) as {{ metric }},
        {%- endfor %}
        bool_and({{ source.is_valid }}) as is_valid,
        max(scored_at) as scored_through
    {{ rows }} and (select sampling.has_samples from sampling)
    group by question_id, answer_cell_key{% for column in partition %}, {{ column }}{% endfor %}
    union all
    select
        question_id,
        {{ source.cell }} as answer_cell_key,
        {%- for column in partition %}
        {{ column }},
        {%- endfor %}
        {%- for metric in source.metrics %}
        {{ metric }},
        {%- endfor %}
        {{ source.is_valid }} as is_valid,
        scored_at as scored_through
    {{ rows }} and not (select sampling.has_samples from sampling)
),

{{ name }}_case_sums as (
    -- summed per case before the metrics are unnested: one row per answer cell, question slice and
    -- case carries each metric's sum, count and valid count (fewer rows to group, all keys integers).
    -- A question alone in its slice of its case is that case's sum as it stands: only questions that
    -- share a slice are grouped (at 100x the paper's cases a case's ten questions fall in nine
    -- slices, and grouping every row into nearly as many groups was most of this model's time)
    select answer_cell_key, slice_key, case_index, {% for column in partition %}{{ column }}, {% endfor %}{{ unnest_struct_array('sums') }}
    from (
        {%- for alone in [true, false] %}
        select
            {{ name }}.answer_cell_key,
            questions.slice_key,
            questions.case_index,
            {%- for column in partition %}
            {{ name }}.{{ column }},
            {%- endfor %}
            {{ array_of(metric_case_sums(name, source.metrics, source.is_valid, alone)) }} as sums
        from {{ name }}
        inner join questions on questions.question_id = {{ name }}.question_id
        where {{ 'not ' if alone }}questions.shares_slice
        {{- '\n        group by all' if not alone }}
        {{- '\n        union all' if alone }}
        {%- endfor %}
    )
),
{%- endfor %}

final as (
    select
        {{ metric_cell_key('answer_cell_key', 'metric', 'slice_key') }} as cell_key,
        answer_cell_key,
        case_index,
        cast(value_sum as double) as value_sum,
        cast(n_questions as integer) as n_questions,
        cast(n_valid as integer) as n_valid,
        scored_through,
        (select keying.keyed_by from keying) as keyed_by
        {%- for column in partition %},
        {{ column }}
        {%- endfor %}
    from (select * from answers_case_sums union all select * from pairs_case_sums)
    where n_questions > 0
)

select * from final
