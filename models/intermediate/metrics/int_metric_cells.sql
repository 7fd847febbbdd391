-- One row per metric cell at the finest grain of int_metric_case_sums (cohort x model x condition
-- x prompt_variant x metric x visibility x format x options_type x eval_target): the labels of its
-- cell_key. Built from the few distinct answer cells and question slices, kept where a case sum
-- exists, so the 34 M case sums at 100x carry numbers only.
{{ config(materialized='table') }}
with answer_cells as (
    -- distinct before the metrics are unnested: the few cells, not every answer, are multiplied
    select model, condition, prompt_variant, visibility, {{ unnest_values(["'acc'", "'htr'"]) }} as metric
    from (select distinct model, condition, prompt_variant, visibility from {{ ref('int_answers_scored') }} where is_latest_in_cell)
    union all
    select model, condition, prompt_variant, 'paired' as visibility, {{ unnest_values(["'delta_acc'", "'delta_htr'", "'air'", "'hbr'"]) }} as metric
    from (select distinct model, condition, prompt_variant from {{ ref('int_answer_pairs') }})
),

slices as (
    select distinct cohort, format, coalesce(options_type, '') as options_type, eval_target
    from {{ ref('int_questions_positioned') }}
),

labelled as (
    select
        {{ metric_cell_key(
            metric_answer_cell_key('answer_cells.model', 'answer_cells.condition', 'answer_cells.prompt_variant', 'answer_cells.visibility'),
            'answer_cells.metric',
            metric_slice_key('slices.cohort', 'slices.format', 'slices.options_type', 'slices.eval_target')) }} as cell_key,
        slices.cohort,
        answer_cells.model,
        answer_cells.condition,
        answer_cells.prompt_variant,
        answer_cells.metric,
        answer_cells.visibility,
        slices.format,
        slices.options_type,
        slices.eval_target
    from answer_cells
    cross join slices
),

final as (
    select * from labelled
    where cell_key in (select distinct case_sums.cell_key from {{ ref('int_metric_case_sums') }} as case_sums)
)

select * from final
