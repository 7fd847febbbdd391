{# Custom schemas are used as named (staging, intermediate, reference); marts
   land in the target's default schema `main`, so `select * from dim_cases`
   works in a plain DuckDB session. #}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}{{ target.schema }}{%- else -%}{{ custom_schema_name | trim }}{%- endif -%}
{%- endmacro %}
