{# Assert that an expression holds on every row (dbt_utils' test). #}
{% test expression_is_true(model, expression, column_name=none) %}
    select *
    from {{ model }}
    where not coalesce(
        {%- if column_name %} {{ column_name }} {% endif %}{{ expression }}, false)
{% endtest %}
