{# md5 over the columns' text with a separator, NULL as a marker: what
   dbt_utils.generate_surrogate_key does, without the package hub. #}
{% macro surrogate_key(columns) -%}
    {%- if columns is string or columns | length == 0 -%}
        {{ exceptions.raise_compiler_error("surrogate_key expects a non-empty list of column expressions") }}
    {%- endif -%}
    md5(
    {%- for column in columns %}
        coalesce(cast({{ column }} as {{ dbt.type_string() }}), '_null_'){% if not loop.last %} || '-|-' ||{% endif %}
    {%- endfor %}
    )
{%- endmacro %}
