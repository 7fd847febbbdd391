{#- A judgment's score columns (var judgment_score_columns, declared once in dbt_project.yml, where the
    raw tables' DDL takes them too), comma-separated, one per line: what every model that carries a
    judgment's scores selects. -#}
{% macro judgment_score_columns(indent=8) -%}
    {{- var('judgment_score_columns') | map('first') | join(',\n' ~ ' ' * indent) -}}
{%- endmacro %}
