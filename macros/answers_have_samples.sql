{#- One row, has_samples: whether any question was asked more than once (`--samples N`), i.e. a
    newest answer of int_answers_scored has a sample index above 0. With one sample each, a
    question's newest answer a side is its value and its pair is one already: the models that group
    per question skip the grouping. -#}
{% macro answers_have_samples() -%}
    select coalesce(max(sample_index), 0) > 0 as has_samples
    from {{ ref('int_answers_scored') }}
    where is_latest_in_cell
{%- endmacro %}
