{# Assert that no key (the combination of the columns) of the rows the newest build or load wrote
   appears more than once in the whole table: those rows hold the largest `newest_by`. Enough for
   tables that only grow by loads (a new duplicate needs a new row) and for incremental models that
   replace rows by key (delete+insert), given the table was unique before; and it costs a scan of
   the key columns plus a lookup in the newest rows' keys, not a group by every key of the table.
   When every row is the newest (a first load, a build from scratch) it is one group by of every
   key instead: the lookup would then cost that group by three times. #}
{% test newest_keys_unique(model, combination_of_columns, newest_by) %}
    {%- if combination_of_columns is string or combination_of_columns | length == 0 -%}
        {{ exceptions.raise_compiler_error("newest_keys_unique needs a list of columns") }}
    {%- endif %}
    {%- set key = combination_of_columns | join(', ') %}
    {%- set all_newest = false %}
    {%- if execute and load_relation(model) is not none %}
        {#- compiled just before it runs (dbt build compiles each node then), so it sees the build's rows;
            `dbt compile` or `docs generate` before a build finds no table and compiles the general form #}
        {%- set all_newest = run_query(
            "select coalesce(bool_and(" ~ newest_by ~ " = (select max(" ~ newest_by ~ ") from " ~ model ~ ")), true) from " ~ model
        ).columns[0].values()[0] %}
    {%- endif %}
    {%- if all_newest %}
    select {{ key }}, count(*) as n_rows
    from {{ model }}
    group by {{ key }}
    having count(*) > 1
    {%- else %}
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
    {%- endif %}
{% endtest %}
