{# The raw tables on Spark: views raw.<table> over the Parquet landing zone of `hindsight export raw`
   (ingest/publish/landing.py), created before every Spark run (on-run-start), so the sources name
   raw.<table> on both engines and the staging models read the same rows (the partition folders give
   load_id back). A table missing from the zone (a zone written by an older release) fails the run
   with Spark's "path does not exist": `hindsight export raw` writes it. #}
{% macro register_landing() -%}
    {%- if execute and target.type == 'spark' %}
        {%- set landing = landing_path() %}
        {#- the raw source's tables (`hindsight export raw` writes each, an empty one as an empty file; not
            the build ledgers, `exported: false`) #}
        {%- set names = [] %}
        {%- for node in graph.sources.values() if node.source_name == 'raw' and node.meta.get('exported', true) %}
            {%- do names.append(node.name) %}
        {%- endfor %}
        {%- do check_table_functions() %}
        {%- do run_query("create database if not exists raw") %}
        {%- for table in names | sort %}
            {%- do run_query("create or replace view raw." ~ table ~ " as select * from parquet.`" ~ landing ~ "/" ~ table ~ "`") %}
        {%- endfor %}
    {%- endif %}
{%- endmacro %}

{% macro landing_path() -%}
    {%- set path = var('landing_path', env_var('HINDSIGHT_LANDING', '')) -%}
    {%- if not path -%}
        {{ exceptions.raise_compiler_error("the Spark target reads raw data from the landing zone, and none is named: "
            ~ "run `hindsight build --target spark` (it exports what is new and names it), or set HINDSIGHT_LANDING "
            ~ "to the folder of `hindsight export raw`") }}
    {%- endif -%}
    {{ return(path.rstrip('/')) }}
{%- endmacro %}

{#- The Python table functions the Spark models call (ingest/spark/functions.py) live in a session:
    `hindsight build --target spark` registers them before dbt runs; a plain dbt run has none. -#}
{% macro check_table_functions() -%}
    {%- if not run_query("show user functions like 'hindsight_*'").rows %}
        {{ exceptions.raise_compiler_error("the Spark models compute intervals with the project's Python table functions, "
            ~ "which only `hindsight build --target spark` registers: run that instead of `dbt build --target spark`") }}
    {%- endif %}
{%- endmacro %}
