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
-- (keyed_by). `hindsight build --full-refresh` rebuilds it from scratch.
{{ config(materialized='incremental', unique_key='answer_cell_key', incremental_strategy='delete+insert', on_schema_change='fail') }}
with keying as (
    -- what the keys mean: the case numbering and the hash they were computed under
    select md5(version() || string_agg(cohort || '|' || case_id || '|' || case_index, ',' order by cohort, case_index))
        as keyed_by
    from {{ ref('int_bootstrap_cases') }}
),

questions as (
    select
        questions.question_id,
        {{ metric_slice_key('questions.cohort', 'questions.format', 'questions.options_type', 'questions.eval_target') }}
            as slice_key,
        cast(cases.case_index as integer) as case_index
    from {{ ref('int_questions_positioned') }} as questions
    inner join {{ ref('int_bootstrap_cases') }} as cases
        on cases.cohort = questions.cohort and cases.case_id = questions.case_id
),

answer_rows as (
    select
        question_id, acc, htr, parse_status, scored_at,
        {{ metric_answer_cell_key('model', 'condition', 'prompt_variant', 'visibility') }} as answer_cell_key
    from {{ ref('int_answers_scored') }}
    where is_latest_in_cell
),

pair_rows as (
    select
        question_id, delta_acc, delta_htr, air, hbr, both_valid, scored_at,
        {{ metric_answer_cell_key('model', 'condition', 'prompt_variant', "'paired'") }} as answer_cell_key
    from {{ ref('fct_answer_pairs') }}
),

{%- if is_incremental() %}

stored as (
    select
        coalesce(max(scored_through), '1970-01-01') as scored_through,
        coalesce(bool_or(keyed_by <> (select keyed_by from keying)), false) as rekeyed
    from {{ this }}
),

touched as (
    select answer_cell_key from answer_rows
    where scored_at > (select scored_through from stored) or (select rekeyed from stored)
    union
    select answer_cell_key from pair_rows
    where scored_at > (select scored_through from stored) or (select rekeyed from stored)
),
{%- endif %}

answers as (
    select
        question_id,
        answer_cell_key,
        avg(acc) as acc,
        avg(htr) as htr,
        bool_and(parse_status not in ('invalid', 'truncated')) as is_valid,
        max(scored_at) as scored_through
    from answer_rows
    {%- if is_incremental() %}
    where answer_cell_key in (select answer_cell_key from touched)
    {%- endif %}
    group by question_id, answer_cell_key
),

pairs as (
    select
        question_id,
        answer_cell_key,
        avg(delta_acc) as delta_acc,
        avg(delta_htr) as delta_htr,
        avg(air) as air,
        avg(hbr) as hbr,
        bool_and(both_valid) as is_valid,
        max(scored_at) as scored_through
    from pair_rows
    {%- if is_incremental() %}
    where answer_cell_key in (select answer_cell_key from touched)
    {%- endif %}
    group by question_id, answer_cell_key
),

{%- set metrics = {'answers': ['acc', 'htr'], 'pairs': ['delta_acc', 'delta_htr', 'air', 'hbr']} %}
{%- for source, names in metrics.items() %}

{{ source }}_case_sums as (
    -- summed per case before the metrics are unnested: one row per answer cell, question slice and
    -- case carries each metric's sum, count and valid count (fewer rows to group, all keys integers)
    select answer_cell_key, slice_key, case_index, unnest(sums, recursive := true)
    from (
        select
            {{ source }}.answer_cell_key,
            questions.slice_key,
            questions.case_index,
            [
                {%- for metric in names %}
                {{ metric_case_sum(source ~ '.' ~ metric, source ~ '.is_valid', source ~ '.scored_through') }}{{ ',' if not loop.last }}
                {%- endfor %}
            ] as sums
        from {{ source }}
        inner join questions on questions.question_id = {{ source }}.question_id
        group by all
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
        (select keyed_by from keying) as keyed_by
    from (select * from answers_case_sums union all select * from pairs_case_sums)
    where n_questions > 0
)

select * from final
