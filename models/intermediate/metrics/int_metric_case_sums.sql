-- One row per metric cell at the finest grain (cohort x model x condition x prompt_variant x
-- metric x visibility x format x options_type x eval_target; its labels in int_metric_cells) and
-- case: the case's sum of question-level values and its numbers of questions (all, valid). A
-- question's value is the mean over its samples (`--samples N`; with one sample, the answer's own
-- value), and it counts as valid when every sample is. NULL values (metric not defined for the
-- eval_target, unjudged free response) do not count. The one definition of per-case sums: the
-- bootstrap estimator (ingest/stats/metric_estimates.py) sums it to its leaf grain, and the
-- pure-SQL cross-check of the intervals reads it too. Only numbers are stored (a cell key and the
-- case's index in int_bootstrap_cases): at 100x the paper's cases it has 34 M rows.
{{ config(materialized='table') }}
{#- a table: both estimator models (by format, by eval target) read it, and it is computed once -#}
with questions as (
    select
        questions.question_id,
        {{ metric_slice_key('questions.cohort', 'questions.format', 'questions.options_type', 'questions.eval_target') }}
            as slice_key,
        cast(cases.case_index as integer) as case_index
    from {{ ref('int_questions_positioned') }} as questions
    inner join {{ ref('int_bootstrap_cases') }} as cases
        on cases.cohort = questions.cohort and cases.case_id = questions.case_id
),

answers as (
    select
        question_id,
        {{ metric_answer_cell_key('model', 'condition', 'prompt_variant', 'visibility') }} as answer_cell_key,
        avg(acc) as acc,
        avg(htr) as htr,
        bool_and(parse_status not in ('invalid', 'truncated')) as is_valid
    from {{ ref('fct_answers') }}
    where is_latest_in_cell
    group by question_id, answer_cell_key
),

pairs as (
    select
        question_id,
        {{ metric_answer_cell_key('model', 'condition', 'prompt_variant', "'paired'") }} as answer_cell_key,
        avg(delta_acc) as delta_acc,
        avg(delta_htr) as delta_htr,
        avg(air) as air,
        avg(hbr) as hbr,
        bool_and(both_valid) as is_valid
    from {{ ref('fct_answer_pairs') }}
    group by question_id, answer_cell_key
),

question_values as (
    select
        questions.slice_key,
        questions.case_index,
        answers.answer_cell_key,
        answers.is_valid,
        unnest(['acc', 'htr']) as metric,
        unnest([answers.acc, answers.htr]) as value
    from answers
    inner join questions on questions.question_id = answers.question_id
    union all
    select
        questions.slice_key,
        questions.case_index,
        pairs.answer_cell_key,
        pairs.is_valid,
        unnest(['delta_acc', 'delta_htr', 'air', 'hbr']),
        unnest([pairs.delta_acc, pairs.delta_htr, pairs.air, pairs.hbr])
    from pairs
    inner join questions on questions.question_id = pairs.question_id
),

final as (
    select
        {{ metric_cell_key('answer_cell_key', 'metric', 'slice_key') }} as cell_key,
        case_index,
        cast(sum(value) as double) as value_sum,
        cast(count(*) as integer) as n_questions,
        cast(count(*) filter (where is_valid) as integer) as n_valid
    from question_values
    where value is not null
    group by cell_key, case_index
)

select * from final
