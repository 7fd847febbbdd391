{# Engine syntax the models share, dispatched per adapter the way dbt's own cross-database macros
   are: duckdb__ and spark__ versions of each construct that the two dialects spell differently.
   Spark runs with spark.sql.parser.escapedStringLiterals (profiles.yml), so a string literal,
   regexes included, means the same text on both engines. tests/python/test_spark_macros.py runs
   each macro on both with values where the engines' defaults part. #}

{# Whether TEXT has a match of the regular expression PATTERN anywhere (RE2 on DuckDB, Java on Spark). #}
{% macro regex_search(text, pattern) -%}
    {{ return(adapter.dispatch('regex_search')(text, pattern)) }}
{%- endmacro %}
{% macro duckdb__regex_search(text, pattern) -%} regexp_matches({{ text }}, {{ pattern }}) {%- endmacro %}
{% macro spark__regex_search(text, pattern) -%} ({{ text }} rlike {{ pattern }}) {%- endmacro %}

{# The text at a path of keys in a JSON document (a string as its value, anything else as JSON text). #}
{% macro json_text(document) -%}
    {{ return(adapter.dispatch('json_text')(document, varargs)) }}
{%- endmacro %}
{% macro duckdb__json_text(document, keys) -%}
    {{ document }}{% for key in keys %} {{ '->>' if loop.last else '->' }} '{{ key }}'{% endfor %}
{%- endmacro %}
{% macro spark__json_text(document, keys) -%}
    get_json_object({{ document }}, '$.{{ keys | join(".") }}')
{%- endmacro %}

{# The texts at several top-level KEYS of one JSON document, the document parsed once (json_text parses
   it once per key: nine keys of a 150-byte payload took 7.7 s over 17.8 M answers, 1.9 s this way):
   json_texts(document, keys) is a value holding them all, json_texts_item(texts, keys, key) one of them,
   as json_text would give it. #}
{% macro json_texts(document, keys) -%}
    {{ return(adapter.dispatch('json_texts')(document, keys)) }}
{%- endmacro %}
{% macro duckdb__json_texts(document, keys) -%}
    json_extract_string({{ document }}, [{% for key in keys %}'$.{{ key }}'{{ ', ' if not loop.last }}{% endfor %}])
{%- endmacro %}
{#- Spark reads each key with get_json_object, from the document itself #}
{% macro spark__json_texts(document, keys) -%} {{ document }} {%- endmacro %}

{% macro json_texts_item(texts, keys, key) -%}
    {{ return(adapter.dispatch('json_texts_item')(texts, keys, key)) }}
{%- endmacro %}
{% macro duckdb__json_texts_item(texts, keys, key) -%} {{ texts }}[{{ keys.index(key) + 1 }}] {%- endmacro %}
{% macro spark__json_texts_item(texts, keys, key) -%} {{ spark__json_text(texts, [key]) }} {%- endmacro %}

{# The JSON array at KEY of a document as its text; NULL when the value there is not an array. #}
{% macro json_array_text(document, key) -%}
    {{ return(adapter.dispatch('json_array_text')(document, key)) }}
{%- endmacro %}
{% macro duckdb__json_array_text(document, key) -%}
    case when json_type({{ document }} -> '{{ key }}') = 'ARRAY' then cast({{ document }} -> '{{ key }}' as string) end
{%- endmacro %}
{% macro spark__json_array_text(document, key) -%}
    case when ltrim(get_json_object({{ document }}, '$.{{ key }}')) like '[%'
         then to_json(from_json(get_json_object({{ document }}, '$.{{ key }}'), 'array<string>')) end
{%- endmacro %}

{# The 1-based position of VALUE in a JSON array of strings; NULL when absent. #}
{% macro json_list_position(json_array, value) -%}
    {{ return(adapter.dispatch('json_list_position')(json_array, value)) }}
{%- endmacro %}
{% macro duckdb__json_list_position(json_array, value) -%}
    list_position(cast({{ json_array }} as varchar[]), {{ value }})
{%- endmacro %}
{% macro spark__json_list_position(json_array, value) -%}
    nullif(array_position(from_json({{ json_array }}, 'array<string>'), {{ value }}), 0)
{%- endmacro %}

{# string_agg in an order: separator SEP, items ordered by ORDER_BY (NULL items skipped). #}
{% macro ordered_string_agg(expression, separator, order_by) -%}
    {{ return(adapter.dispatch('ordered_string_agg')(expression, separator, order_by)) }}
{%- endmacro %}
{% macro duckdb__ordered_string_agg(expression, separator, order_by) -%}
    string_agg({{ expression }}, {{ separator }} order by {{ order_by }})
{%- endmacro %}
{% macro spark__ordered_string_agg(expression, separator, order_by) -%}
    listagg({{ expression }}, {{ separator }}) within group (order by {{ order_by }})
{%- endmacro %}

{# The distinct values of a text, sorted, joined by SEP. #}
{% macro sorted_distinct_string_agg(expression, separator) -%}
    {{ return(adapter.dispatch('sorted_distinct_string_agg')(expression, separator)) }}
{%- endmacro %}
{% macro duckdb__sorted_distinct_string_agg(expression, separator) -%}
    string_agg(distinct {{ expression }}, {{ separator }} order by {{ expression }})
{%- endmacro %}
{% macro spark__sorted_distinct_string_agg(expression, separator) -%}
    listagg(distinct {{ expression }}, {{ separator }}) within group (order by {{ expression }})
{%- endmacro %}

{# One row per item of a literal list, in a select list (`unnest` there). #}
{% macro unnest_values(items) -%}
    {{ return(adapter.dispatch('unnest_values')(items)) }}
{%- endmacro %}
{% macro duckdb__unnest_values(items) -%}
    unnest([{{ items | join(', ') }}])
{%- endmacro %}
{% macro spark__unnest_values(items) -%}
    explode(array({{ items | join(', ') }}))
{%- endmacro %}

{# sha-256 of a text as 64 hex digits. #}
{% macro sha256_hex(text) -%}
    {{ return(adapter.dispatch('sha256_hex')(text)) }}
{%- endmacro %}
{% macro duckdb__sha256_hex(text) -%} sha256({{ text }}) {%- endmacro %}
{% macro spark__sha256_hex(text) -%} sha2({{ text }}, 256) {%- endmacro %}

{# `*` without some columns: DuckDB's EXCLUDE, Spark's EXCEPT. #}
{% macro star_except(columns, relation=none) -%}
    {{ return(adapter.dispatch('star_except')(columns, relation)) }}
{%- endmacro %}
{% macro duckdb__star_except(columns, relation) -%}
    {{ relation ~ '.' if relation }}* exclude ({{ columns | join(', ') }})
{%- endmacro %}
{% macro spark__star_except(columns, relation) -%}
    {{ relation ~ '.' if relation }}* except ({{ columns | join(', ') }})
{%- endmacro %}

{# A 64-bit hash of one or more values (internal keys and comparisons only: the engines' values differ). #}
{% macro hash64(values) -%}
    {{ return(adapter.dispatch('hash64')(values if values is not string else [values])) }}
{%- endmacro %}
{% macro duckdb__hash64(values) -%} hash({{ values | join(', ') }}) {%- endmacro %}
{% macro spark__hash64(values) -%} xxhash64({{ values | join(', ') }}) {%- endmacro %}

{# A struct of named fields (FIELDS: a list of (name, expression) pairs). #}
{% macro struct_of(fields) -%}
    {{ return(adapter.dispatch('struct_of')(fields)) }}
{%- endmacro %}
{% macro duckdb__struct_of(fields) -%}
    { {%- for name, expression in fields %}'{{ name }}': {{ expression }}{{ ', ' if not loop.last }}{% endfor -%} }
{%- endmacro %}
{% macro spark__struct_of(fields) -%}
    named_struct({%- for name, expression in fields %}'{{ name }}', {{ expression }}{{ ', ' if not loop.last }}{% endfor -%})
{%- endmacro %}

{# A list (array) of the expressions ITEMS. #}
{% macro array_of(items) -%}
    {{ return(adapter.dispatch('array_of')(items)) }}
{%- endmacro %}
{% macro duckdb__array_of(items) -%} [{{ items | join(', ') }}] {%- endmacro %}
{% macro spark__array_of(items) -%} array({{ items | join(', ') }}) {%- endmacro %}

{# One row per struct of a list of structs, the struct's fields as columns (in a select list). #}
{% macro unnest_struct_array(column) -%}
    {{ return(adapter.dispatch('unnest_struct_array')(column)) }}
{%- endmacro %}
{% macro duckdb__unnest_struct_array(column) -%} unnest({{ column }}, recursive := true) {%- endmacro %}
{% macro spark__unnest_struct_array(column) -%} inline({{ column }}) {%- endmacro %}

{# The integers 0 .. COUNT - 1 (COUNT a column of the rows before) as column NAME of ALIAS: a
   lateral join, one row per integer beside each row. #}
{% macro lateral_range(count, name, alias) -%}
    {{ return(adapter.dispatch('lateral_range')(count, name, alias)) }}
{%- endmacro %}
{% macro duckdb__lateral_range(count, name, alias) -%}
    cross join lateral (select unnest(range({{ count }})) as {{ name }}) as {{ alias }}
{%- endmacro %}
{% macro spark__lateral_range(count, name, alias) -%}
    cross join lateral (select explode(sequence(0, {{ count }} - 1)) as {{ name }}) as {{ alias }}
{%- endmacro %}

{# The integers 0 .. COUNT - 1 as a relation with column NAME. #}
{% macro range_relation(count, name) -%}
    {{ return(adapter.dispatch('range_relation')(count, name)) }}
{%- endmacro %}
{% macro duckdb__range_relation(count, name) -%}
    (select cast(range as integer) as {{ name }} from range({{ count }}))
{%- endmacro %}
{% macro spark__range_relation(count, name) -%}
    (select cast(id as integer) as {{ name }} from range({{ count }}))
{%- endmacro %}

{# A CTE's materialisation hint (`name as {{ cte_materialized(true) }} (...)`): DuckDB's; Spark has none. #}
{% macro cte_materialized(materialized) -%}
    {{ return(adapter.dispatch('cte_materialized')(materialized)) }}
{%- endmacro %}
{% macro duckdb__cte_materialized(materialized) -%} {{ '' if materialized else 'not ' }}materialized {%- endmacro %}
{% macro spark__cte_materialized(materialized) -%} {%- endmacro %}

{# A JSON object's text from (name, expression) pairs, NULL members kept as null. #}
{% macro json_object_text(fields) -%}
    {{ return(adapter.dispatch('json_object_text')(fields)) }}
{%- endmacro %}
{% macro duckdb__json_object_text(fields) -%}
    cast(json_object({%- for name, expression in fields %}'{{ name }}', {{ expression }}{{ ', ' if not loop.last }}{% endfor -%}) as varchar)
{%- endmacro %}
{% macro spark__json_object_text(fields) -%}
    to_json(named_struct({%- for name, expression in fields %}'{{ name }}', {{ expression }}{{ ', ' if not loop.last }}{% endfor -%}),
            map('ignoreNullFields', 'false'))
{%- endmacro %}

{# A JSON document's text as a JSON value inside json_object_text (an array of strings here). #}
{% macro json_value(text) -%}
    {{ return(adapter.dispatch('json_value')(text)) }}
{%- endmacro %}
{% macro duckdb__json_value(text) -%} cast({{ text }} as json) {%- endmacro %}
{% macro spark__json_value(text) -%} from_json({{ text }}, 'array<string>') {%- endmacro %}

{# A JSON object of KEY: VALUE over a group, keys sorted (so the text is the same on every build). #}
{% macro json_map_agg(key, value) -%}
    {{ return(adapter.dispatch('json_map_agg')(key, value)) }}
{%- endmacro %}
{% macro duckdb__json_map_agg(key, value) -%}
    cast(to_json(map(list({{ key }} order by {{ key }}), list({{ value }} order by {{ key }}))) as varchar)
{%- endmacro %}
{% macro spark__json_map_agg(key, value) -%}
    to_json(map_from_entries(array_sort(collect_list(struct({{ key }}, {{ value }})))))
{%- endmacro %}

{# One row per string of a JSON array in column JSON_COLUMN of RELATION: its KEYS, the 1-based
   position and the string as VALUE. #}
{% macro json_array_rows(relation, keys, json_column, value, position) -%}
    {{ return(adapter.dispatch('json_array_rows')(relation, keys, json_column, value, position)) }}
{%- endmacro %}
{% macro duckdb__json_array_rows(relation, keys, json_column, value, position) -%}
    select {% for key in keys %}{{ relation }}.{{ key }}, {% endfor -%}
        cast(elements.position as integer) as {{ position }}, elements.element as {{ value }}
    from {{ relation }},
        unnest(cast(cast({{ relation }}.{{ json_column }} as json) as varchar[])) with ordinality as elements (element, position)
{%- endmacro %}
{% macro spark__json_array_rows(relation, keys, json_column, value, position) -%}
    select {% for key in keys %}{{ relation }}.{{ key }}, {% endfor -%}
        cast(elements.offset + 1 as integer) as {{ position }}, elements.element as {{ value }}
    from {{ relation }}
        lateral view posexplode(from_json({{ relation }}.{{ json_column }}, 'array<string>')) elements as offset, element
{%- endmacro %}

{# Integer division of integers, rounding toward minus infinity for the non-negative keys it divides. #}
{% macro int_div(dividend, divisor) -%}
    {{ return(adapter.dispatch('int_div')(dividend, divisor)) }}
{%- endmacro %}
{% macro duckdb__int_div(dividend, divisor) -%} (({{ dividend }}) // ({{ divisor }})) {%- endmacro %}
{% macro spark__int_div(dividend, divisor) -%} (({{ dividend }}) div ({{ divisor }})) {%- endmacro %}

{# The keys of a JSON object's text, sorted and joined by commas. #}
{% macro json_sorted_keys(document) -%}
    {{ return(adapter.dispatch('json_sorted_keys')(document)) }}
{%- endmacro %}
{% macro duckdb__json_sorted_keys(document) -%}
    array_to_string(list_sort(json_keys(cast({{ document }} as json))), ',')
{%- endmacro %}
{% macro spark__json_sorted_keys(document) -%}
    array_join(array_sort(json_object_keys({{ document }})), ',')
{%- endmacro %}


{# The P-quantile of a column over a group, interpolated linearly between order statistics (numpy's default). #}
{% macro quantile_linear(column, p) -%}
    {{ return(adapter.dispatch('quantile_linear')(column, p)) }}
{%- endmacro %}
{% macro duckdb__quantile_linear(column, p) -%} quantile_cont({{ column }}, {{ p }}) {%- endmacro %}
{% macro spark__quantile_linear(column, p) -%} percentile({{ column }}, {{ p }}) {%- endmacro %}

{# The config of an incremental fact. DuckDB replaces the rows of the keys it recomputes
   (delete+insert on UNIQUE_KEY). Spark (Parquet, no Delta or Iceberg jars) partitions the table by
   model and overwrites the partitions of the models it recomputes (insert_overwrite with dynamic
   partition overwrite): a model's `is_incremental()` branch selects every row of those models. #}
{% macro fact_config(unique_key) -%}
    {%- if target.type == 'spark' -%}
        {{ return({'materialized': 'incremental', 'incremental_strategy': 'insert_overwrite', 'partition_by': ['model'],
                   'on_schema_change': 'fail'}) }}
    {%- endif -%}
    {{ return({'materialized': 'incremental', 'unique_key': unique_key, 'incremental_strategy': 'delete+insert',
               'on_schema_change': 'fail'}) }}
{%- endmacro %}

{# One row per item of the array ITEMS (an expression over the rows before), as columns VALUE and
   POSITION (1-based) of ALIAS: a lateral join, like DuckDB's `unnest(...) with ordinality`. #}
{% macro lateral_items(items, value, position, alias) -%}
    {{ return(adapter.dispatch('lateral_items')(items, value, position, alias)) }}
{%- endmacro %}
{% macro duckdb__lateral_items(items, value, position, alias) -%}
    cross join unnest({{ items }}) with ordinality as {{ alias }} ({{ value }}, {{ position }})
{%- endmacro %}
{% macro spark__lateral_items(items, value, position, alias) -%}
    cross join lateral (
        select inline(transform({{ items }}, (item, i) -> named_struct('{{ value }}', item, '{{ position }}', i + 1)))
    ) as {{ alias }}
{%- endmacro %}

{# TEXT split at each occurrence of the literal SEPARATOR (a one-character text, or '' for each
   character), empty pieces kept. #}
{% macro split_text(text, separator) -%}
    {{ return(adapter.dispatch('split_text')(text, separator)) }}
{%- endmacro %}
{% macro duckdb__split_text(text, separator) -%} string_split({{ text }}, {{ separator }}) {%- endmacro %}
{% macro spark__split_text(text, separator) -%}
    {#- Spark splits at a regex: the separator quoted; '' splits into characters (no empty last piece) -#}
    {%- if separator == "''" -%} split({{ text }}, '(?!$)')
    {%- else -%} split({{ text }}, concat('\Q', {{ separator }}, '\E'), -1)
    {%- endif -%}
{%- endmacro %}

{# Every match of the regular expression PATTERN in TEXT replaced by REPLACEMENT. #}
{% macro regex_replace_all(text, pattern, replacement) -%}
    {{ return(adapter.dispatch('regex_replace_all')(text, pattern, replacement)) }}
{%- endmacro %}
{% macro duckdb__regex_replace_all(text, pattern, replacement) -%}
    regexp_replace({{ text }}, {{ pattern }}, {{ replacement }}, 'g')
{%- endmacro %}
{% macro spark__regex_replace_all(text, pattern, replacement) -%}
    regexp_replace({{ text }}, {{ pattern }}, {{ replacement }})
{%- endmacro %}

{# The first days of the months from FIRST to LAST (literal dates 'YYYY-MM-DD') as texts, column NAME. #}
{% macro month_starts(first, last, name) -%}
    {{ return(adapter.dispatch('month_starts')(first, last, name)) }}
{%- endmacro %}
{% macro duckdb__month_starts(first, last, name) -%}
    (select cast(cast(month_start as date) as string) as {{ name }}
     from generate_series(date '{{ first }}', date '{{ last }}', interval 1 month) as months (month_start))
{%- endmacro %}
{% macro spark__month_starts(first, last, name) -%}
    (select cast(month_start as string) as {{ name }}
     from (select explode(sequence(date '{{ first }}', date '{{ last }}', interval 1 month)) as month_start))
{%- endmacro %}

{# The values of a list var, ITEMS (texts or numbers), as the rows of a relation with columns VALUE
   and POSITION (1-based). #}
{% macro enumerated_values(items, value, position) -%}
    (select * from (values
        {%- for item in items %} ({{ "'" ~ item ~ "'" if item is string else item }}, {{ loop.index }}){{ ',' if not loop.last }}{% endfor %})
        as items ({{ value }}, {{ position }}))
{%- endmacro %}
