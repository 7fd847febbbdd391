{# Assert that no key (the combination of the columns) of the rows the newest build or load wrote
   appears more than once in the whole table: those rows hold the largest `newest_by`. Enough for
   tables that only grow by loads (a new duplicate needs a new row) and for incremental models that
   replace rows by key (delete+insert), given the table was unique before; and it costs a scan of
   the key columns plus a lookup in the newest rows' keys, not a group by every key of the table
   (after a full refresh every row is the newest build's, and all are checked). #}
{% test newest_keys_unique(model, combination_of_columns, newest_by) %}
    {%- if combination_of_columns is string or combination_of_columns | length == 0 -%}
        {{ exceptions.raise_compiler_error("newest_keys_unique needs a list of columns") }}
    {%- endif %}
    {%- set key = combination_of_columns | join(', ') %}
    with newest as (
        select distinct {{ key }}
        from {{ model }}
        where {{ newest_by }} = (select max({{ newest_by }}) from {{ model }})
    )

    select {{ key }}, count(*) as n_rows
    from {{ model }}
    semi join newest using ({{ key }})
    group by {{ key }}
    having count(*) > 1
{% endtest %}
