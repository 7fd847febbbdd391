{# Publish the public marts for readers at the end of every successful build (on-run-end; ingest/serve/snapshots.py
   explains the design). A run publishes when nothing in it failed and it rebuilt dim_build, whose
   dbt_invocation_id names the snapshot, so a reader asks dim_build which build it sees (`hindsight build`
   always rebuilds it; a `dbt run --select` without it publishes nothing and says so). `dbt run-operation
   publish_snapshot` (`hindsight publish`) publishes the warehouse as it stands.

   A snapshot writes only the marts the run could have changed, and takes the others from the snapshot
   before it (a hard link on DuckDB, the same table on Spark): an append that touches a few marts does
   not copy `fct_answers` again. A mart could have changed when it, or a model, seed or snapshot
   upstream of it, ran in this run (unchanged_marts). A run that began and did not publish (it failed,
   was killed, or publishing was off) leaves its mark (mark_unpublished_run), and the next publish
   then writes every mart. #}
{% macro publish_snapshot(results=none) -%}
    {%- if execute -%}
        {%- set refusal = publish_snapshot_refusal(results) -%}
        {%- if refusal -%}
            {{- log('hindsight: no snapshot published: ' ~ refusal, info=true) -}}
        {%- else -%}
            {%- set marts = public_mart_relations() -%}
            {%- set unchanged = [] if results is none or unpublished_run_before() else unchanged_marts(results) -%}
            {%- do adapter.dispatch('publish_snapshot')(marts, unchanged) -%}
            {%- do run_query('drop table if exists ' ~ unpublished_run_table()) -%}
        {%- endif -%}
    {%- endif -%}
    {{- return('') -}}
{%- endmacro %}

{# on-run-start: a run that may change marts marks itself unpublished until it publishes; the mark
   of an earlier run that never published stays, so that the next publish writes every mart #}
{% macro mark_unpublished_run() -%}
    {%- if execute and flags.WHICH in ('build', 'run', 'seed') -%}
        {%- do run_query('create schema if not exists ' ~ unpublished_run_table().split('.')[0]) -%}
        {%- do run_query(adapter.dispatch('create_table_if_missing')(unpublished_run_table(),
                                                                     "select '" ~ invocation_id ~ "' as invocation_id")) -%}
    {%- endif -%}
    {{- return('') -}}
{%- endmacro %}

{% macro unpublished_run_table() -%}
    {{- return('hindsight_publish.unpublished_run') -}}
{%- endmacro %}

{% macro default__create_table_if_missing(name, sql) -%}
    create table if not exists {{ name }} as {{ sql }}
{%- endmacro %}

{% macro spark__create_table_if_missing(name, sql) -%}
    create table if not exists {{ name }} using parquet as {{ sql }}
{%- endmacro %}

{# True when a run other than this one began and did not publish, or when no mark says otherwise #}
{% macro unpublished_run_before() -%}
    {%- set name = unpublished_run_table() -%}
    {%- if not adapter.dispatch('table_exists')(name.split('.')[0], name.split('.')[1]) -%}
        {{- return(true) -}}
    {%- endif -%}
    {%- set marks = run_query('select invocation_id from ' ~ name).columns[0].values() -%}
    {{- return(marks | reject('equalto', invocation_id) | list | length > 0 or not marks) -}}
{%- endmacro %}

{% macro default__table_exists(schema, table) -%}
    {{- return(run_query("select 1 from information_schema.tables where table_schema = '" ~ schema
                         ~ "' and table_name = '" ~ table ~ "'").rows | length > 0) -}}
{%- endmacro %}

{% macro spark__table_exists(schema, table) -%}
    {%- if not run_query("show databases like '" ~ schema ~ "'").rows -%}
        {{- return(false) -}}
    {%- endif -%}
    {{- return(run_query("show tables in " ~ schema ~ " like '" ~ table ~ "'").rows | length > 0) -}}
{%- endmacro %}

{# The identifiers of the public marts that RESULTS' run cannot have changed: no model, seed or snapshot
   upstream of them ran. (A view that reads a raw table is re-read in the snapshot when the staging view
   between them runs, as it does in every build after a load: `hindsight build` selects what lies
   downstream of the tables loaded.) #}
{% macro unchanged_marts(results) -%}
    {%- set ran = [] -%}
    {%- for result in results if result.status == 'success' and result.node.resource_type in ('model', 'seed', 'snapshot') -%}
        {%- do ran.append(result.node.unique_id) -%}
    {%- endfor -%}
    {%- set unchanged = [] -%}
    {%- for mart in graph.nodes.values() | sort(attribute='name') if mart.resource_type == 'model' and mart.access == 'public' -%}
        {#- upstream, breadth first: the loop also walks what is appended to it #}
        {%- set upstream = [mart.unique_id] -%}
        {%- for id in upstream if id in graph.nodes and id not in ran -%}
            {%- for parent in graph.nodes[id].depends_on.nodes if parent not in upstream -%}
                {%- do upstream.append(parent) -%}
            {%- endfor -%}
        {%- endfor -%}
        {%- if not (upstream | select('in', ran) | list) -%}
            {%- do unchanged.append(mart.alias) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(unchanged) -}}
{%- endmacro %}

{% macro default__publish_snapshot(marts, unchanged) -%}
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

{% macro duckdb__publish_snapshot(marts, unchanged) -%}
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
    {%- set written = [] -%}
    {%- set digests = {} -%}        {#- each parent's rows digested once, for every partitioned mart it feeds #}
    {%- set seconds = {} -%}         {#- per mart, the seconds its publish took: the manifest records them #}
    {%- for mart in marts -%}
        {%- set started = modules.datetime.datetime.now() -%}
        {%- set mart_columns = rows | selectattr(0, 'equalto', mart.identifier) | list -%}
        {%- set column = publish_partition_column(mart) -%}
        {%- if column -%}
            {%- if publish_partitions(mart, column, mart_columns, staging, snapshot_id, mart.identifier in unchanged, digests) -%}
                {%- do written.append(mart.identifier) -%}
            {%- endif -%}
        {%- elif mart.identifier not in unchanged
               or not run_query("select hindsight_snapshot_reuse('" ~ staging ~ "', '" ~ snapshot_id ~ "', '" ~ mart.identifier
                                ~ "', '" ~ (tojson(mart_columns) | replace("'", "''")) ~ "')").columns[0].values()[0] -%}
            {#- named <mart>-<snapshot id>.parquet (ingest/serve/snapshots.py mart_file) #}
            {%- do run_query("copy (select * from " ~ mart ~ ") to '" ~ staging ~ "/" ~ mart.identifier ~ "-" ~ snapshot_id
                             ~ ".parquet' (format parquet, compression zstd)") -%}
            {%- do written.append(mart.identifier) -%}
        {%- endif -%}
        {%- do seconds.update({mart.identifier: (modules.datetime.datetime.now() - started).total_seconds()}) -%}
    {%- endfor -%}
    {%- set published = run_query("select hindsight_snapshot_commit('" ~ staging ~ "', '" ~ snapshot_id ~ "', '"
                                  ~ (tojson(rows) | replace("'", "''")) ~ "', '" ~ tojson(seconds) ~ "')").columns[0].values()[0] -%}
    {{- log('hindsight: published snapshot ' ~ snapshot_id ~ ' of ' ~ (marts | length) ~ ' marts (' ~ (written | length)
          ~ ' written, ' ~ (marts | length - written | length)
          ~ ' as in the last snapshot): ' ~ published, info=true) -}}
    {{- return('') -}}
{%- endmacro %}

{# Spark: each snapshot is a database of its own (`snapshot_<build time>_<invocation id>`), and readers
   query the views of the `serving` database, switched to the new snapshot's marts once every one is
   written: a view is replaced in one metastore operation, so each mart a reader reads is one build's,
   whole, and a failed or killed build leaves the views as they were. A mart the run left unchanged
   keeps its view, over the snapshot database that holds it. The newest HINDSIGHT_SNAPSHOT_KEEP
   snapshot databases (default 3), and every one a view still reads, stay.

   A mart published by partition (meta publish_partition_by) is a view in the snapshot database over
   the partitions of its store, `serving_parts.<mart>_<digest of its columns>`, each named by the
   digest of what its rows are computed from (partition_signatures): a partition whose inputs did not
   change is the one an earlier snapshot wrote, so an append writes its new model's partitions only.
   Any other mart is a table copied from main. #}
{% macro spark__publish_snapshot(marts, unchanged) -%}
    {%- set dim_build = marts | selectattr('identifier', 'equalto', 'dim_build') | first -%}
    {%- set snapshot_id = run_query('select dbt_invocation_id from ' ~ dim_build).columns[0].values()[0] -%}
    {%- set database = 'snapshot_' ~ run_started_at.strftime('%Y%m%d%H%M%S') ~ '_' ~ snapshot_id.replace('-', '_') -%}
    {%- set existing = run_query("show databases like 'snapshot_*'").columns[0].values() | sort -%}
    {%- set held = serving_view_databases(marts) -%}
    {%- set copied = [] -%}
    {%- set partitions = [] -%}     {#- per partitioned mart, what its publish wrote: for the log #}
    {%- set digests = {} -%}        {#- each parent's rows digested once, for every partitioned mart it feeds #}
    {%- do run_query('drop database if exists ' ~ database ~ ' cascade') -%}
    {%- do run_query('create database ' ~ database) -%}
    {%- for mart in marts if not (mart.identifier in unchanged and held.get(mart.identifier) in existing) -%}
        {%- set column = publish_partition_column(mart) -%}
        {%- if column -%}
            {%- set counts = spark_publish_partitions(mart, column, database, digests) -%}
            {%- do partitions.append(mart.identifier ~ ' ' ~ counts[0] ~ ' of ' ~ counts[1]) -%}
        {%- else -%}
            {%- do run_query('create table ' ~ database ~ '.' ~ mart.identifier ~ ' using parquet as select * from ' ~ mart) -%}
        {%- endif -%}
        {%- do copied.append(mart.identifier) -%}
    {%- endfor -%}
    {%- do run_query('create database if not exists serving') -%}
    {%- for mart in copied -%}
        {%- do run_query('create or replace view serving.' ~ mart ~ ' as select * from ' ~ database ~ '.' ~ mart) -%}
        {%- do held.update({mart: database}) -%}
    {%- endfor -%}
    {%- set kept = env_var('HINDSIGHT_SNAPSHOT_KEEP', '3') | int -%}
    {%- set read = held.values() | list -%}
    {%- for old in existing[:[0, (existing | length) - kept + 1] | max] if old != database and old not in read -%}
        {%- do run_query('drop database ' ~ old ~ ' cascade') -%}
    {%- endfor -%}
    {%- do drop_unread_partitions() -%}
    {{- log('hindsight: published snapshot ' ~ snapshot_id ~ ' of ' ~ (marts | length) ~ ' marts (' ~ (copied | length)
          ~ ' written, ' ~ (marts | length - copied | length) ~ ' as in the last snapshot; partitions written: '
          ~ (partitions | join(', ') or 'none') ~ '): views serving.<mart> over ' ~ database, info=true) -}}
    {{- return('') -}}
{%- endmacro %}

{# Publish partitioned mart RELATION (Spark) as view DATABASE.<mart> over its store's partitions,
   writing those no snapshot wrote yet in one pass. [partitions written, partitions in the mart]. #}
{% macro spark_publish_partitions(relation, column, database, digests) -%}
    {%- set columns = adapter.get_columns_in_relation(relation) -%}
    {%- set names = columns | map(attribute='name') | map('replace', '`', '``') | list -%}
    {%- set schema = [] -%}
    {%- for c in columns -%}
        {%- do schema.append([c.name, c.data_type]) -%}
    {%- endfor -%}
    {#- a store per set of columns: a mart whose columns change starts a store of its own #}
    {%- set store = 'serving_parts.' ~ relation.identifier ~ '_' ~ local_md5(tojson(schema))[:12] -%}
    {%- do run_query('create database if not exists serving_parts') -%}
    {%- do run_query('create table if not exists ' ~ store ~ ' using parquet partitioned by (publish_part) as select *, '
                     ~ 'cast(null as string) as publish_part from ' ~ relation ~ ' where false') -%}
    {%- set stored = store_part_names(store) -%}
    {%- set parts = {} -%}          {#- part name by value: the digest of the value and its signature #}
    {%- for value, signature in partition_signatures(relation, column, digests) -%}
        {%- do parts.update({value: local_md5(tojson([value, signature]))}) -%}
    {%- endfor -%}
    {%- set to_write = parts.items() | rejectattr(1, 'in', stored) | list -%}
    {%- if to_write -%}
        {#- insert overwrite (dynamic): a partition a killed publish left half-written is replaced #}
        {%- do run_query('insert overwrite table ' ~ store ~ ' partition (publish_part) select * from (select `'
                         ~ names | join('`, `') ~ '`, case' ~ spark_part_cases(column, to_write) ~ ' end as publish_part from '
                         ~ relation ~ ') as rows where publish_part is not null') -%}
        {#- a value of no rows (a model with no judgments) writes no folder: registered empty, so the
            next publish does not write it again #}
        {%- do run_query('alter table ' ~ store ~ ' add if not exists' ~ spark_part_specs(to_write)) -%}
    {%- endif -%}
    {%- do run_query('create view ' ~ database ~ '.' ~ relation.identifier ~ ' as select `' ~ names | join('`, `') ~ '` from ' ~ store
                     ~ ((" where publish_part in ('" ~ parts.values() | join("', '") ~ "')") if parts else ' where false')) -%}
    {{- return([to_write | length, parts | length]) -}}
{%- endmacro %}

{% macro spark_part_specs(parts) -%}
    {%- for value, part in parts %} partition (publish_part = '{{ part }}'){% endfor -%}
{%- endmacro %}

{% macro spark_part_cases(column, parts) -%}
    {%- for value, part in parts %} when `{{ column }}` <=> {{ 'null' if value is none else "'" ~ escape_single_quotes(value | string) ~ "'" }} then '{{ part }}'{% endfor -%}
{%- endmacro %}

{# Drop the store partitions (and whole stores) that no snapshot database's view reads. Only the
   views named as a store's mart are read back: a metastore call each, not one per mart. #}
{% macro drop_unread_partitions() -%}
    {%- if not run_query("show databases like 'serving_parts'").rows -%}
        {{- return('') -}}
    {%- endif -%}
    {#- (the session's temporary views are listed in every database) #}
    {%- set stores = run_query('show tables in serving_parts').rows | rejectattr('isTemporary') | map(attribute='tableName') | list -%}
    {%- set marts = [] -%}
    {%- for store in stores -%}
        {%- do marts.append(store.rsplit('_', 1)[0]) -%}
    {%- endfor -%}
    {%- set read = {} -%}
    {%- for database in run_query("show databases like 'snapshot_*'").columns[0].values() -%}
        {%- for view in run_query('show views in ' ~ database).rows if not view['isTemporary'] and view['viewName'] in marts -%}
            {%- set text = run_query('show create table ' ~ database ~ '.' ~ view['viewName']).columns[0].values()[0] -%}
            {%- set store = modules.re.search('serving_parts\\.(\\w+)', text) -%}
            {%- if store -%}
                {%- do read.setdefault(store.group(1), []).extend(modules.re.findall("'([0-9a-f]{32})'", text)) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- for store in stores -%}
        {%- if store not in read -%}
            {%- do run_query('drop table serving_parts.' ~ store) -%}
        {%- else -%}
            {%- set specs = [] -%}
            {%- for part in store_part_names('serving_parts.' ~ store) if part not in read[store] -%}
                {%- do specs.append("partition (publish_part = '" ~ part ~ "')") -%}
            {%- endfor -%}
            {%- if specs -%}
                {%- do run_query('alter table serving_parts.' ~ store ~ ' drop if exists ' ~ specs | join(', ')) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return('') -}}
{%- endmacro %}

{# The names of STORE's partitions (their publish_part) #}
{% macro store_part_names(store) -%}
    {{- return(run_query('show partitions ' ~ store).columns[0].values() | map('replace', 'publish_part=', '') | list) -}}
{%- endmacro %}

{# Per mart, the snapshot database its serving view reads now (none for a mart without a view) #}
{% macro serving_view_databases(marts) -%}
    {%- set held = {} -%}
    {%- if not run_query("show databases like 'serving'").rows -%}
        {{- return(held) -}}
    {%- endif -%}
    {%- set views = run_query('show views in serving').columns['viewName'].values() -%}
    {%- for mart in marts if mart.identifier in views -%}
        {%- set text = run_query('show create table serving.' ~ mart.identifier).columns[0].values()[0] -%}
        {%- set found = modules.re.findall('(snapshot_[0-9a-z_]+)\\.' ~ mart.identifier, text) -%}
        {%- if found -%}
            {%- do held.update({mart.identifier: found[-1]}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(held) -}}
{%- endmacro %}

{# The model node whose relation is RELATION #}
{% macro mart_node(relation) -%}
    {{- return(graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
               | selectattr('alias', 'equalto', relation.identifier) | first) -}}
{%- endmacro %}

{# The column a public mart is published by, a file per value (its YAML's meta publish_partition_by), or none #}
{% macro publish_partition_column(relation) -%}
    {{- return(mart_node(relation).config.meta.get('publish_partition_by')) -}}
{%- endmacro %}

{# Publish partitioned mart RELATION (DuckDB): link from the snapshot before each partition whose
   signature it holds, write each other one into a file of its own, and the empty file that carries
   the mart's columns. True when any partition was written. A query per value: a join of one model's
   answers to their provenance fits in memory, 17.8 M answers' at once (100x the paper's cases) did
   not and spilled (100 s for fct_answers, 18 s by model). #}
{% macro publish_partitions(relation, column, mart_columns, staging, snapshot_id, unchanged, digests) -%}
    {%- set signatures = 'null' if unchanged else tojson(partition_signatures(relation, column, digests)) -%}
    {%- set to_write = fromjson(run_query("select hindsight_snapshot_reuse_partitions('" ~ staging ~ "', '" ~ snapshot_id ~ "', '"
        ~ relation.identifier ~ "', '" ~ (tojson(mart_columns) | replace("'", "''")) ~ "', '" ~ column ~ "', '"
        ~ (signatures | replace("'", "''")) ~ "')").columns[0].values()[0]) -%}
    {%- do run_query("copy (select * from " ~ relation ~ " limit 0) to '" ~ staging ~ "/" ~ relation.identifier ~ "-" ~ snapshot_id
                     ~ ".parquet' (format parquet, compression zstd)") -%}
    {%- if to_write is none -%}
        {%- set to_write = run_query("select distinct " ~ adapter.quote(column) ~ " from " ~ relation).columns[0].values() -%}
    {%- endif -%}
    {%- for value in to_write -%}
        {#- ingest/serve/snapshots.py gathers these files (PARTS), each file's value read from it #}
        {%- do run_query("copy (select * from " ~ relation ~ " where " ~ adapter.quote(column)
                         ~ (" is null" if value is none else " = '" ~ (value | string | replace("'", "''")) ~ "'") ~ ") to '"
                         ~ staging ~ "/.parts-" ~ relation.identifier ~ "/" ~ loop.index ~ ".parquet' (format parquet, compression zstd)") -%}
    {%- endfor -%}
    {{- return(to_write | length > 0) -}}
{%- endmacro %}

{# [value, signature] per value of COLUMN in public mart RELATION: a digest of what its rows are computed
   from. For a view: its SQL, and its parents' rows (a parent with COLUMN per value, any other whole);
   for a table, its own rows. Equal signatures, equal rows, provided a mart row of value v is computed
   only from parent rows of v and from parents without the column (the answer-level facts by model: an
   answer, its provenance, its pair, its question). DIGESTS caches each parent's, for the next mart. #}
{% macro partition_signatures(relation, column, digests) -%}
    {%- set node = mart_node(relation) -%}
    {%- set view = adapter.dispatch('view_digest')(relation) -%}
    {%- set inputs = [] -%}
    {%- for parent_id in (node.depends_on.nodes | sort if view else []) -%}
        {%- set parent = graph.nodes.get(parent_id) or graph.sources.get(parent_id) -%}
        {%- do inputs.append(api.Relation.create(database=parent.database, schema=parent.schema,
                                                 identifier=parent.alias or parent.identifier)) -%}
    {%- endfor -%}
    {%- if not view -%}
        {%- do inputs.append(relation) -%}
    {%- endif -%}
    {%- set found = [] -%}
    {%- for input in inputs -%}
        {%- do found.append(input_digests(input, column, digests)) -%}
    {%- endfor -%}
    {%- set values = [] -%}
    {%- for by_value in found if by_value.keyed -%}
        {%- for value in by_value.rows if value not in values -%}
            {%- do values.append(value) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set signatures = [] -%}
    {%- for value in values -%}
        {%- set parts = [view] -%}
        {%- for by_value in found -%}
            {%- do parts.append(by_value.rows.get(value if by_value.keyed else '', '-')) -%}
        {%- endfor -%}
        {%- do signatures.append([value, local_md5(parts | join('|'))]) -%}
    {%- endfor -%}
    {{- return(signatures) -}}
{%- endmacro %}

{# A relation's rows digested (their count and the sum of their hashes: neither order nor a repeated
   row goes unseen): per value of COLUMN when it has that column (keyed), else under ''. #}
{% macro input_digests(input, column, digests) -%}
    {%- set key = input ~ '|' ~ column -%}
    {%- if key not in digests -%}
        {%- set keyed = adapter.dispatch('has_column')(input, column) -%}
        {%- set rows = adapter.dispatch('row_digests')(input, column if keyed else none) -%}
        {%- do digests.update({key: {'keyed': keyed, 'rows': rows}}) -%}
    {%- endif -%}
    {{- return(digests[key]) -}}
{%- endmacro %}

{# A digest of view RELATION's definition, or '' when it is a table #}
{% macro duckdb__view_digest(relation) -%}
    {%- set found = run_query("select md5(sql) from duckdb_views() where schema_name = '" ~ relation.schema
                              ~ "' and view_name = '" ~ relation.identifier ~ "'").columns[0].values() -%}
    {{- return(found[0] if found else '') -}}
{%- endmacro %}

{% macro spark__view_digest(relation) -%}
    {%- set text = run_query('show create table ' ~ relation).columns[0].values()[0] -%}
    {#- without its properties: the time of its last DDL changes with every run that recreates it #}
    {{- return(local_md5(modules.re.sub("TBLPROPERTIES \\([^)]*\\)", "", text)) if text.startswith('CREATE VIEW') else '') -}}
{%- endmacro %}

{% macro duckdb__has_column(relation, column) -%}
    {#- information_schema, not adapter.get_columns_in_relation: that opens a transaction, which the
        end of the run rolls back, and with it the removal of the unpublished mark after the publish #}
    {{- return(run_query("select count(*) from information_schema.columns where table_schema = '" ~ relation.schema
                         ~ "' and table_name = '" ~ relation.identifier ~ "' and column_name = '" ~ column ~ "'").columns[0].values()[0] > 0) -}}
{%- endmacro %}

{% macro spark__has_column(relation, column) -%}
    {{- return(column in adapter.get_columns_in_relation(relation) | map(attribute='name') | list) -}}
{%- endmacro %}

{# Per value of COLUMN in INPUT (under '' when COLUMN is none), a digest of its rows: their count and
   the sum of their hashes, so that neither order nor a repeated row goes unseen #}
{% macro duckdb__row_digests(input, column) -%}
    {{- return(digest_rows(run_query("select " ~ (adapter.quote(column) if column else "''") ~ ", concat(count(*), ':', coalesce(sum(hash(t)), 0))"
                                     ~ " from " ~ input ~ " as t group by 1"))) -}}
{%- endmacro %}

{# Spark: hashing every row of a fact (every answer's text at 100x) costs more than the copy it saves.
   By value, the files its rows are read from stand for them: Spark names each file it writes anew (a
   UUID per job), an incremental fact rewrites only the partitions it recomputes and the landing zone's
   files are never rewritten. Rows without a file name (a view that shuffles), and inputs without
   COLUMN (small tables rebuilt whole, new files each build), are hashed. #}
{% macro spark__row_digests(input, column) -%}
    {%- if column -%}
        {%- set files = run_query("select value, max(file = ''), concat(count(*), ':', md5(array_join(array_sort(collect_set(file)), ',')))"
                                  ~ " from (select " ~ adapter.quote(column) ~ " as value, input_file_name() as file from " ~ input ~ ") group by value") -%}
        {%- if not (files.columns[1].values() | select | list) -%}
            {{- return(digest_rows(files, 2)) -}}
        {%- endif -%}
    {%- endif -%}
    {{- return(digest_rows(run_query("select value, concat(count(*), ':', coalesce(sum(row_hash), 0)) from (select "
                                     ~ (adapter.quote(column) if column else "''") ~ " as value, cast(xxhash64(*) as decimal(38, 0)) as row_hash from "
                                     ~ input ~ ") group by value"))) -}}
{%- endmacro %}

{# {value: digest} from TABLE's rows of [value, ..., digest at position AT] #}
{% macro digest_rows(table, at=1) -%}
    {%- set rows = {} -%}
    {%- for row in table.rows -%}
        {%- do rows.update({row[0]: row[at]}) -%}
    {%- endfor -%}
    {{- return(rows) -}}
{%- endmacro %}
