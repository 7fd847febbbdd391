{{ config(materialized='view') }}
-- One row per metric cell at the finest grain (cohort x model x condition x
-- prompt_variant x metric x visibility x format x options_type) and case: the
-- case's sum of question-level values and its numbers of questions (all,
-- valid). The long form of agg_answer_case_sums and agg_pair_case_sums, for
-- inspection and for the pure-SQL cross-check of the bootstrap.
{%- set sources = [('agg_answer_case_sums', ['acc', 'htr']),
                   ('agg_pair_case_sums', ['delta_acc', 'delta_htr', 'air', 'hbr'])] %}
with
{%- for relation, metrics in sources %}
{{ relation }} as (
    select * from {{ ref(relation) }}
),
{%- endfor %}

final as (
    {%- for relation, metrics in sources %}
    {%- set outer_loop = loop %}
    {%- for metric in metrics %}
    select
        cohort, model, condition, prompt_variant, '{{ metric }}' as metric, visibility, format,
        options_type, case_id,
        cast({{ metric }}_sum as double) as value_sum,
        cast({{ metric }}_n as bigint) as n_questions,
        cast({{ metric }}_valid as bigint) as n_valid
    from {{ relation }}
    where {{ metric }}_n > 0
    {%- if not (loop.last and outer_loop.last) %}
    union all
    {%- endif %}
    {%- endfor %}
    {%- endfor %}
)

select * from final
