-- One row per metric cell at the finest grain (cohort x model x condition x prompt_variant x
-- metric x visibility x format x options_type x eval_target) and case: the case's sum of
-- question-level values and its numbers of questions (all, valid). NULL values (metric not
-- defined for the eval_target, unjudged free response) do not count. The one definition of
-- per-case sums: the bootstrap estimator (ingest/stats/metric_estimates.py) sums it to its leaf
-- grain, and the pure-SQL cross-check of the intervals reads it too.
{%- set sources = [
    ('answers', "visibility", "parse_status <> 'invalid'", ['acc', 'htr']),
    ('pairs', "'paired'", "both_valid", ['delta_acc', 'delta_htr', 'air', 'hbr']),
] %}
with answers as (
    select * from {{ ref('fct_answers') }}
    where is_latest_in_cell
),

pairs as (
    select * from {{ ref('fct_answer_pairs') }}
),

final as (
    {%- for relation, visibility, validity, metrics in sources %}
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
        cast(count({{ metric }}) filter (where {{ validity }}) as bigint) as n_valid
    from {{ relation }}
    group by all
    having count({{ metric }}) > 0
    {%- if not (loop.last and outer_loop.last) %}
    union all
    {%- endif %}
    {%- endfor %}
    {%- endfor %}
)

select * from final
