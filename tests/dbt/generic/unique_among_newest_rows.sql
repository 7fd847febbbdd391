{# Assert that the combination of the columns is unique among the rows the newest build wrote: those
   whose `newest_by` holds its largest value. For incremental models that replace rows by key
   (delete+insert): a build deletes every stored row whose key it writes, so a duplicate can only
   come from the rows of one build, and the check costs the size of a build, not of the table (after
   a full refresh, every row is the newest build's). #}
{% test unique_among_newest_rows(model, combination_of_columns, newest_by) %}
    {%- if combination_of_columns is string or combination_of_columns | length == 0 -%}
        {{ exceptions.raise_compiler_error("unique_among_newest_rows needs a list of columns") }}
    {%- endif %}
    select {{ combination_of_columns | join(', ') }}, count(*) as n_rows
    from {{ model }}
    where {{ newest_by }} = (select max({{ newest_by }}) from {{ model }})
    group by {{ combination_of_columns | join(', ') }}
    having count(*) > 1
{% endtest %}
