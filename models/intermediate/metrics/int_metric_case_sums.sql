-- One row per metric cell at the finest grain (cohort x model x condition x prompt_variant x
-- metric x visibility x format x options_type x eval_target) and case: the case's sum of
-- question-level values and its numbers of questions (all, valid). A question's value is the
-- mean over its samples (`--samples N`; with one sample, the answer's own value), and it counts
-- as valid when every sample is. NULL values (metric not defined for the eval_target, unjudged
-- free response) do not count. The one definition of
-- per-case sums: the bootstrap estimator (ingest/stats/metric_estimates.py) sums it to its leaf
-- grain, and the pure-SQL cross-check of the intervals reads it too.
{{ config(materialized='table') }}
{#- a table: both estimator models (by format, by eval target) read it, and it is computed once -#}
{%- set sources = [
    ('answers', "visibility", ['acc', 'htr']),
    ('pairs', "'paired'", ['delta_acc', 'delta_htr', 'air', 'hbr']),
] %}
with answers as (
    select
        cohort, model, condition, prompt_variant, visibility, format, options_type, eval_target, case_id, question_id,
        avg(acc) as acc,
        avg(htr) as htr,
        bool_and(parse_status not in ('invalid', 'truncated')) as is_valid
    from {{ ref('fct_answers') }}
    where is_latest_in_cell
    group by all
),

pairs as (
    select
        cohort, model, condition, prompt_variant, format, options_type, eval_target, case_id, question_id,
        avg(delta_acc) as delta_acc,
        avg(delta_htr) as delta_htr,
        avg(air) as air,
        avg(hbr) as hbr,
        bool_and(both_valid) as is_valid
    from {{ ref('fct_answer_pairs') }}
    group by all
),

final as (
    {%- for relation, visibility, metrics in sources %}
    {%- set outer_loop = loop %}
    {%- for metric in metrics %}
    select
        cohort,
        model,
        condition,
        prompt_variant,
        '{{ metric }}' as metric,
        {{ visibility }} as visibility,
        format,
        coalesce(options_type, '') as options_type,
        eval_target,
        case_id,
        cast(sum({{ metric }}) as double) as value_sum,
        cast(count({{ metric }}) as bigint) as n_questions,
        cast(count({{ metric }}) filter (where is_valid) as bigint) as n_valid
    from {{ relation }}
    group by cohort, model, condition, prompt_variant, {{ visibility }}, format, options_type, eval_target, case_id
    having count({{ metric }}) > 0
    {%- if not (loop.last and outer_loop.last) %}
    union all
    {%- endif %}
    {%- endfor %}
    {%- endfor %}
)

select * from final
