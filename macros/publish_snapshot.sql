{# Publish the public marts for readers at the end of every successful build (on-run-end; ingest/serve/snapshots.py
   explains the design). A run publishes when nothing in it failed and it rebuilt dim_build, whose
   dbt_invocation_id names the snapshot, so a reader asks dim_build which build it sees (`hindsight build`
   always rebuilds it; a `dbt run --select` without it publishes nothing and says so). `dbt run-operation
   publish_snapshot` (`hindsight publish`) publishes the warehouse as it stands. #}
{% macro publish_snapshot(results=none) -%}
    {%- if execute -%}
        {%- set refusal = publish_snapshot_refusal(results) -%}
        {%- if refusal -%}
            {{- log('hindsight: no snapshot published: ' ~ refusal, info=true) -}}
        {%- else -%}
            {%- do adapter.dispatch('publish_snapshot')(public_mart_relations()) -%}
        {%- endif -%}
    {%- endif -%}
    {{- return('') -}}
{%- endmacro %}

{% macro default__publish_snapshot(marts) -%}
{%- endmacro %}

{# the reason a run publishes nothing, or '' when it publishes #}
{% macro publish_snapshot_refusal(results) -%}
    {%- if env_var('HINDSIGHT_PUBLISH', 'on') | lower in ('off', '0', 'false', 'no') -%}
        {{- return('HINDSIGHT_PUBLISH is off: readers read the warehouse with --live') -}}
    {%- elif results is none -%}
        {{- return('') -}}
    {%- elif flags.WHICH not in ('build', 'run') -%}
        {{- return('dbt ' ~ flags.WHICH ~ ' changes no mart') -}}
    {%- endif -%}
    {%- set failed = [] -%}
    {%- set built = [] -%}
    {%- for result in results -%}
        {%- if result.status in ('error', 'fail', 'skipped', 'runtime error', 'partial success') -%}
            {%- do failed.append(result.node.name) -%}
        {%- elif result.node.name == 'dim_build' -%}
            {%- do built.append(result.node.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if failed -%}
        {{- return(failed | length ~ ' nodes failed or were skipped (' ~ (failed[:3] | join(', ')) ~ '): readers keep the previous snapshot') -}}
    {%- elif not built -%}
        {{- return('this run did not rebuild dim_build, which names the snapshot: add it to --select, or run `hindsight build`') -}}
    {%- endif -%}
    {{- return('') -}}
{%- endmacro %}

{% macro public_mart_relations() -%}
    {%- set relations = [] -%}
    {%- for node in graph.nodes.values() | sort(attribute='name') if node.resource_type == 'model' and node.access == 'public' -%}
        {%- do relations.append(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) -%}
    {%- endfor -%}
    {{- return(relations) -}}
{%- endmacro %}

{% macro duckdb__publish_snapshot(marts) -%}
    {#- the marts' columns as the warehouse declares them: what the manifest records and the views cast to #}
    {%- set columns = run_query("select table_name, column_name, data_type from information_schema.columns where table_schema = 'main' and table_name in ('"
                                ~ (marts | map(attribute='identifier') | join("', '")) ~ "') order by table_name, ordinal_position") -%}
    {%- set rows = [] -%}
    {%- for row in columns.rows -%}
        {%- do rows.append([row[0], row[1], row[2]]) -%}
    {%- endfor -%}
    {%- set present = rows | map('first') | list -%}
    {%- set missing = marts | map(attribute='identifier') | reject('in', present) | list -%}
    {%- if missing -%}
        {{- log('hindsight: no snapshot published: marts not built yet: ' ~ (missing[:5] | join(', ')), info=true) -}}
        {{- return('') -}}
    {%- endif -%}
    {%- set snapshot_id = run_query('select dbt_invocation_id from main.dim_build').columns[0].values()[0] -%}
    {%- set staging = run_query("select hindsight_snapshot_begin('" ~ snapshot_id ~ "')").columns[0].values()[0] -%}
    {%- if not staging -%}
        {{- log('hindsight: snapshot ' ~ snapshot_id ~ ' is already published', info=true) -}}
        {{- return('') -}}
    {%- endif -%}
    {#- one thread: the answer-level marts are views whose aggregates over every response, built by
        two threads at once, outgrew the memory limit at 100x the paper's cases #}
    {%- set threads = run_query("select current_setting('threads')").columns[0].values()[0] -%}
    {%- do run_query("set threads = 1") -%}
    {%- for mart in marts -%}
        {#- named <mart>-<snapshot id>.parquet (ingest/serve/snapshots.py mart_file) #}
        {%- do run_query("copy (select * from " ~ mart ~ ") to '" ~ staging ~ "/" ~ mart.identifier ~ "-" ~ snapshot_id
                         ~ ".parquet' (format parquet, compression zstd)") -%}
    {%- endfor -%}
    {%- do run_query("set threads = " ~ threads) -%}
    {%- set published = run_query("select hindsight_snapshot_commit('" ~ staging ~ "', '" ~ snapshot_id ~ "', '"
                                  ~ (tojson(rows) | replace("'", "''")) ~ "')").columns[0].values()[0] -%}
    {{- log('hindsight: published snapshot ' ~ snapshot_id ~ ' of ' ~ (marts | length) ~ ' marts: ' ~ published, info=true) -}}
    {{- return('') -}}
{%- endmacro %}

{# Spark: each snapshot is a database of its own (`snapshot_<build time>_<invocation id>`, tables copied
   from main), and readers query the views of the `serving` database, switched to the new snapshot's
   tables once every table is written: a view is replaced in one metastore operation, so each mart a
   reader reads is one build's, whole, and a failed or killed build leaves the views as they were. The
   newest HINDSIGHT_SNAPSHOT_KEEP snapshot databases (default 3) stay for queries in flight. #}
{% macro spark__publish_snapshot(marts) -%}
    {%- set dim_build = marts | selectattr('identifier', 'equalto', 'dim_build') | first -%}
    {%- set snapshot_id = run_query('select dbt_invocation_id from ' ~ dim_build).columns[0].values()[0] -%}
    {%- set database = 'snapshot_' ~ run_started_at.strftime('%Y%m%d%H%M%S') ~ '_' ~ snapshot_id.replace('-', '_') -%}
    {%- do run_query('drop database if exists ' ~ database ~ ' cascade') -%}
    {%- do run_query('create database ' ~ database) -%}
    {%- for mart in marts -%}
        {%- do run_query('create table ' ~ database ~ '.' ~ mart.identifier ~ ' using parquet as select * from ' ~ mart) -%}
    {%- endfor -%}
    {%- do run_query('create database if not exists serving') -%}
    {%- for mart in marts -%}
        {%- do run_query('create or replace view serving.' ~ mart.identifier ~ ' as select * from ' ~ database ~ '.' ~ mart.identifier) -%}
    {%- endfor -%}
    {%- set kept = env_var('HINDSIGHT_SNAPSHOT_KEEP', '3') | int -%}
    {%- set existing = run_query("show databases like 'snapshot_*'").columns[0].values() | sort -%}
    {%- for old in existing[:[0, (existing | length) - kept] | max] if old != database -%}
        {%- do run_query('drop database ' ~ old ~ ' cascade') -%}
    {%- endfor -%}
    {{- log('hindsight: published snapshot ' ~ snapshot_id ~ ' of ' ~ (marts | length) ~ ' marts: views serving.<mart> over ' ~ database, info=true) -}}
    {{- return('') -}}
{%- endmacro %}
