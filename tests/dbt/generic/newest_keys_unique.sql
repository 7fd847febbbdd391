{# Assert that no key (the combination of the columns) of the rows the newest build or load wrote
   appears more than once in the whole table: those rows hold the largest `newest_by`. Enough for
   tables that only grow by loads (a new duplicate needs a new row) and for incremental models that
   replace rows by key (delete+insert), given the table was unique before; and it costs a scan of
   the key columns plus a lookup in the newest rows' keys, not a group by every key of the table.
   When every row is the newest (a first load, a build from scratch) every key is checked instead:
   the lookup would then cost that group by three times.

   `dense_within: {group: EXPR, position: EXPR}` says the key is a group and an integer position in
   it (a cell and a case's index, a load and a line): every key is then checked as one bitmap of the
   positions per group (a key repeats exactly when a group has more rows than distinct positions),
   which at 100x the paper's cases takes 0.2-0.4 s where a group by of 18-34 M keys took 2-4 s;
   only the groups that fail are grouped by key, to list the repeated keys. The group and position
   must together be the key (each a function of its columns and the key of them). Checked by the
   group by instead when the bitmaps would pass 2^31 bits, 256 MB (groups x the positions' range). #}
{% test newest_keys_unique(model, combination_of_columns, newest_by, dense_within=none) %}
    {%- if combination_of_columns is string or combination_of_columns | length == 0 -%}
        {{ exceptions.raise_compiler_error("newest_keys_unique needs a list of columns") }}
    {%- endif %}
    {%- set key = combination_of_columns | join(', ') %}
    {%- set all_newest = false %}
    {%- set bitmap = none %}
    {%- if execute and load_relation(model) is not none %}
        {#- compiled just before it runs (dbt build compiles each node then), so it sees the build's rows;
            `dbt compile` or `docs generate` before a build finds no table and compiles the general form #}
        {%- set all_newest = run_query(
            "select coalesce(bool_and(" ~ newest_by ~ " = (select max(" ~ newest_by ~ ") from " ~ model ~ ")), true) from " ~ model
        ).columns[0].values()[0] %}
        {#- the bitmaps are DuckDB's (bitstring_agg); other engines group by the key #}
        {%- if all_newest and dense_within and target.type == 'duckdb' %}
            {%- set bounds = run_query(
                "select min(" ~ dense_within.position ~ "), max(" ~ dense_within.position ~ "), "
                ~ "approx_count_distinct(" ~ dense_within.group ~ ") from " ~ model).rows[0] %}
            {%- if bounds[0] is not none and (bounds[1] - bounds[0] + 1) * ([bounds[2], 1] | max) <= 2147483648 %}
                {%- set bitmap = {'low': bounds[0], 'high': bounds[1]} %}
            {%- endif %}
        {%- endif %}
    {%- endif %}
    {%- if bitmap %}
    with groups as (
        select
            {{ dense_within.group }} as key_group,
            count(*) as n_rows,
            count({{ dense_within.position }}) as n_positions,
            bit_count(bitstring_agg({{ dense_within.position }}, {{ bitmap.low }}, {{ bitmap.high }})) as n_distinct
        from {{ model }}
        group by key_group
    ),

    failing as (
        -- a repeated position, or more than one row without a position (a group by holds NULLs equal)
        select key_group from groups
        where n_distinct < n_positions or n_rows - n_positions > 1
    )

    select {{ key }}, count(*) as n_rows
    from (select *, {{ dense_within.group }} as key_group from {{ model }}) as keyed
    semi join failing on failing.key_group is not distinct from keyed.key_group
    group by {{ key }}
    having count(*) > 1
    {%- elif all_newest %}
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
