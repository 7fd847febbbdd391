{# Literals on Spark. With escapedStringLiterals (profiles.yml) a literal is its text, as on DuckDB,
   and no escape works inside one: an apostrophe or a backslash is spelled chr(39) or chr(92)
   between the literal's pieces. dbt's own escaping (a backslash before the apostrophe) would end
   the literal early or keep the backslash; unit-test fixtures and seeds go through these. #}
{% macro spark__escape_single_quotes(expression) -%}
    {%- set parts = [] %}
    {%- for part in (expression | string).split("'") %}
        {%- do parts.append(part.split('\\') | join("' || chr(92) || '")) %}
    {%- endfor %}
    {{- parts | join("' || chr(39) || '") -}}
{%- endmacro %}

{# Seeds on Spark: dbt-spark's session method puts each value between quotes as it is, so a value
   with an apostrophe (prompt_variants.csv) broke the statement; each value is a literal as above. #}
{% macro spark__load_csv_rows(model, agate_table) %}
    {%- set column_override = model['config'].get('column_types', {}) %}
    {%- set statements = [] %}
    {%- for chunk in agate_table.rows | batch(get_batch_size()) %}
        {%- set sql %}
            insert into {{ this.render() }} values
            {%- for row in chunk %}
            ({%- for col_name in agate_table.column_names -%}
                {%- set type = column_override.get(col_name, adapter.convert_type(agate_table, loop.index0)) -%}
                cast({{ spark_seed_literal(row[loop.index0]) }} as {{ type }}){{ ', ' if not loop.last }}
            {%- endfor -%}){{ ',' if not loop.last }}
            {%- endfor %}
        {%- endset %}
        {%- do adapter.add_query(sql, abridge_sql_log=True) %}
        {%- if loop.first %}{% do statements.append(sql) %}{% endif %}
    {%- endfor %}
    {{ return(statements[0] if statements else '') }}
{% endmacro %}

{% macro spark_seed_literal(value) -%}
    {%- if value is none -%} null
    {%- elif value is sameas true -%} true
    {%- elif value is sameas false -%} false
    {%- elif value is number -%} {{ value }}
    {%- else -%} ('{{ spark__escape_single_quotes(value) }}')
    {%- endif -%}
{%- endmacro %}
