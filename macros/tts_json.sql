{# Render TTS rows as the prompts show them. DuckDB syntax lives only here. #}

{# Hours as the shortest text: 24 not 24.0, -6.5 stays -6.5. #}
{% macro hours_text(column) -%}
    {{ return(adapter.dispatch('hours_text')(column)) }}
{%- endmacro %}

{% macro duckdb__hours_text(column) -%}
    case when {{ column }} = trunc({{ column }}) and abs({{ column }}) < 1e15
         then cast(cast({{ column }} as bigint) as varchar)
         else cast({{ column }} as varchar) end
{%- endmacro %}

{# JSON array of {"event", "time"} objects in the given order, '[]' when empty. #}
{% macro tts_json_agg(event, hours, order_by) -%}
    {{ return(adapter.dispatch('tts_json_agg')(event, hours, order_by)) }}
{%- endmacro %}

{% macro duckdb__tts_json_agg(event, hours, order_by) -%}
    coalesce(
        '[' || string_agg(
            '{"event": ' || to_json({{ event }}) || ', "time": ' || {{ hours_text(hours) }} || '}',
            ', ' order by {{ order_by }}
        ) || ']',
        '[]'
    )
{%- endmacro %}

{# `event | time` lines, as in the paper's synthetic-narrative prompt example. #}
{% macro tts_lines_agg(event, hours, order_by) -%}
    {{ return(adapter.dispatch('tts_lines_agg')(event, hours, order_by)) }}
{%- endmacro %}

{% macro duckdb__tts_lines_agg(event, hours, order_by) -%}
    coalesce(string_agg({{ event }} || ' | ' || {{ hours_text(hours) }}, chr(10) order by {{ order_by }}), '')
{%- endmacro %}

{# Event text compared by meaning, not by typing: lowercase, every run of characters that are not
   letters or digits one space, trimmed ("Admitted to ICU." = "admitted  to icu"). #}
{% macro normalised_event_text(column) -%}
    {{ return(adapter.dispatch('normalised_event_text')(column)) }}
{%- endmacro %}

{% macro duckdb__normalised_event_text(column) -%}
    trim(regexp_replace(lower({{ column }}), '[^[:alnum:]]+', ' ', 'g'))
{%- endmacro %}
