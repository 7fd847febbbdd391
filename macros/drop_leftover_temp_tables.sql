{# dbt-duckdb 1.11 leaves the batch table of an incremental Python model behind
   (`<model>__dbt_tmp<timestamp>`, in the default schema): a post-hook of those models drops
   every such table, so incremental builds do not litter the warehouse. #}
{% macro drop_leftover_temp_tables(relation) %}
    {%- if execute and target.type == 'duckdb' %}
        {%- set found = run_query("select schema_name, table_name from duckdb_tables() where database_name = '"
            ~ relation.database ~ "' and starts_with(table_name, '" ~ relation.identifier ~ "__dbt_tmp')") %}
        {%- for row in found.rows %}
            {%- do run_query('drop table if exists "' ~ relation.database ~ '"."' ~ row[0] ~ '"."' ~ row[1] ~ '"') %}
        {%- endfor %}
    {%- endif %}
{% endmacro %}
