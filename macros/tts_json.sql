{# Render TTS rows as the prompts show them. Engine syntax lives only here: duckdb__ and spark__
   versions, which tests/python/test_spark_macros.py runs on both engines with the same values. #}

{# Hours as the shortest text: 24 not 24.0, -6.5 stays -6.5. #}
{% macro hours_text(column) -%}
    {{ return(adapter.dispatch('hours_text')(column)) }}
{%- endmacro %}

{% macro duckdb__hours_text(column) -%}
    case when {{ column }} = trunc({{ column }}) and abs({{ column }}) < 1e15
         then cast(cast({{ column }} as bigint) as string)
         else cast({{ column }} as string) end
{%- endmacro %}

{# Spark's trunc() is for dates: floor() tells an integral value. #}
{% macro spark__hours_text(column) -%}
    case when {{ column }} = floor({{ column }}) and abs({{ column }}) < 1e15
         then cast(cast({{ column }} as bigint) as string)
         else cast({{ column }} as string) end
{%- endmacro %}

{# JSON array of {"event", "time"} objects in the given order, '[]' when empty. #}
{% macro tts_json_agg(event, hours, order_by) -%}
    {{ return(adapter.dispatch('tts_json_agg')(event, hours, order_by)) }}
{%- endmacro %}

{% macro duckdb__tts_json_agg(event, hours, order_by) -%}
    coalesce(
        '[' || string_agg(
            '{"event": ' || {{ json_string(event) }} || ', "time": ' || {{ hours_text(hours) }} || '}',
            ', ' order by {{ order_by }}
        ) || ']',
        '[]'
    )
{%- endmacro %}

{# Spark has no ordered string_agg: the items are collected with their sort key, sorted, joined
   (array_join skips NULL items as string_agg does). to_json has no scalar form: a one-field
   object's text without its `{"v":` and `}` is the JSON string. #}
{% macro spark__tts_json_agg(event, hours, order_by) -%}
    coalesce(
        '[' || array_join(transform(array_sort(collect_list(struct({{ order_by }} as sort_key,
            '{"event": ' || {{ json_string(event) }} || ', "time": ' || {{ hours_text(hours) }} || '}' as item))),
            entry -> entry.item), ', ') || ']',
        '[]'
    )
{%- endmacro %}

{# A text value as a JSON string literal (NULL stays NULL). #}
{% macro json_string(column) -%}
    {{ return(adapter.dispatch('json_string')(column)) }}
{%- endmacro %}

{% macro duckdb__json_string(column) -%}
    to_json({{ column }})
{%- endmacro %}

{% macro spark__json_string(column) -%}
    case when {{ column }} is not null
         then substr(to_json(named_struct('v', {{ column }})), 6, length(to_json(named_struct('v', {{ column }}))) - 6) end
{%- endmacro %}

{# `event | time` lines, as in the paper's synthetic-narrative prompt example. #}
{% macro tts_lines_agg(event, hours, order_by) -%}
    {{ return(adapter.dispatch('tts_lines_agg')(event, hours, order_by)) }}
{%- endmacro %}

{% macro duckdb__tts_lines_agg(event, hours, order_by) -%}
    coalesce(string_agg({{ event }} || ' | ' || {{ hours_text(hours) }}, chr(10) order by {{ order_by }}), '')
{%- endmacro %}

{% macro spark__tts_lines_agg(event, hours, order_by) -%}
    coalesce(array_join(transform(array_sort(collect_list(struct({{ order_by }} as sort_key,
        {{ event }} || ' | ' || {{ hours_text(hours) }} as item))), entry -> entry.item), char(10)), '')
{%- endmacro %}

{# Event text compared by meaning, not by typing: lowercase, every run of characters that are not
   letters or digits one space, trimmed ("Admitted to ICU." = "admitted  to icu"). #}
{% macro normalised_event_text(column) -%}
    {{ return(adapter.dispatch('normalised_event_text')(column)) }}
{%- endmacro %}

{% macro duckdb__normalised_event_text(column) -%}
    trim(regexp_replace(lower({{ column }}), '[^[:alnum:]]+', ' ', 'g'))
{%- endmacro %}

{# Spark (Java regex) has no [[:alnum:]] and no 'g' flag (it replaces every match): RE2's
   [[:alnum:]] is ASCII, so the class is spelled out. #}
{% macro spark__normalised_event_text(column) -%}
    trim(regexp_replace(lower({{ column }}), '[^0-9A-Za-z]+', ' '))
{%- endmacro %}
