{#- The groups (COLUMNS of int_answers_scored) with an answer scored after the newest score an
    incremental aggregate counted (its scored_through): the groups it counts again. -#}
{% macro groups_scored_since_last_build(columns) -%}
    select distinct {{ columns | join(', ') }}
    from {{ ref('int_answers_scored') }}
    where scored_at > (select coalesce(max(scored_through), '1970-01-01') from {{ this }})
{%- endmacro %}
