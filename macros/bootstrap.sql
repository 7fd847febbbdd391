{# The counter-based mixer of ingest/stats/bootstrap.py, so SQL and numpy draw the
   same cases: values stay below 2^31 - 1 and are multiplied by a constant
   below 2^27, so no intermediate reaches 2^63 in any engine. #}

{% macro bootstrap_prime() -%} 2147483647 {%- endmacro %}

{# One xorshift-multiply round; `mix` in Python is two of them. #}
{% macro bootstrap_mix_round(column) -%}
    {{ return(adapter.dispatch('bootstrap_mix_round')(column)) }}
{%- endmacro %}

{% macro duckdb__bootstrap_mix_round(column) -%}
    ((xor({{ column }}, {{ column }} >> 16) * 73244475) % {{ bootstrap_prime() }})
{%- endmacro %}

{# Spark: `^` is its bitwise xor, shiftright its `>>`; the operands stay bigint (below 2^58). #}
{% macro spark__bootstrap_mix_round(column) -%}
    ((cast({{ column }} as bigint) ^ shiftright(cast({{ column }} as bigint), 16)) * 73244475 % {{ bootstrap_prime() }})
{%- endmacro %}

{# A stable stream per cohort: the first 7 hex digits of md5(cohort). #}
{% macro bootstrap_cohort_key(column) -%}
    {{ return(adapter.dispatch('bootstrap_cohort_key')(column)) }}
{%- endmacro %}

{% macro duckdb__bootstrap_cohort_key(column) -%}
    cast('0x' || left(md5({{ column }}), 7) as bigint)
{%- endmacro %}

{# Spark casts no '0x…' text (NULL with ANSI off): conv reads the hex digits instead. #}
{% macro spark__bootstrap_cohort_key(column) -%}
    cast(conv(substr(md5({{ column }}), 1, 7), 16, 10) as bigint)
{%- endmacro %}

{# `rounds` CTEs named <prefix>_1 .. <prefix>_n, each applying one mixing
   round to column h of the previous (<prefix>_0 must exist). #}
{% macro bootstrap_mix_stages(prefix, columns, rounds) -%}
    {%- for i in range(rounds) %}
{{ prefix }}_{{ i + 1 }} as (
    select {{ columns | join(', ') }}, {{ bootstrap_mix_round('h') }} as h
    from {{ prefix }}_{{ i }}
),
    {%- endfor %}
{%- endmacro %}
