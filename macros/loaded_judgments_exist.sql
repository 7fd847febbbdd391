{#- Whether any judgment was loaded from a file: int_loaded_judgments_matched reads no answer without
    one (asked when the model compiles; a warehouse without the raw table, as a linter's, has none;
    unit tests override it with the value their rows give). -#}
{% macro loaded_judgments_exist() -%}
    {%- if execute and load_relation(source('raw', 'loaded_judgments')) is not none -%}
        {{ return(run_query("select count(*) > 0 from " ~ source('raw', 'loaded_judgments')).rows[0][0]) }}
    {%- endif -%}
    {{ return(not execute) }}
{%- endmacro %}
