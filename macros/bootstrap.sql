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

{# CTEs <prefix>_0 .. ending in <prefix>_multiplicities: the draws of the case-clustered bootstrap
   for each population of POPULATIONS (a relation with the KEYS columns, its size in column
   n_cases and its stream in stream_key, e.g. bootstrap_cohort_key of its name): one row per
   population x replicate x drawn case index (0-based) with how often replicate r drew it (undrawn
   cases have no row). The integers of ingest/stats/bootstrap.py `weights`: fct_bootstrap_samples
   draws the metric bootstrap's cohorts with it, the validation table its strata. #}
{% macro bootstrap_multiplicities(prefix, populations, keys) -%}
{%- set carried = keys + ['n_cases'] %}
{{ prefix }}_stream_0 as (
    select {{ carried | join(', ') }}, ({{ var('bootstrap_seed') }} % {{ bootstrap_prime() }} + stream_key) % {{ bootstrap_prime() }} as h
    from {{ populations }}
),

{{ bootstrap_mix_stages(prefix ~ '_stream', carried, 2) }}

{{ prefix }}_replicate_0 as (
    select
        {%- for column in carried %}
        streams.{{ column }},
        {%- endfor %}
        replicates.replicate,
        (streams.h + replicates.replicate) % {{ bootstrap_prime() }} as h
    from {{ prefix }}_stream_2 as streams
    -- an integer from the start (not cast at the end), so a filter on replicate reaches the draws
    cross join {{ range_relation(var('bootstrap_replicates'), 'replicate') }} as replicates
),

{{ bootstrap_mix_stages(prefix ~ '_replicate', carried + ['replicate'], 2) }}

{{ prefix }}_draw_0 as (
    select
        {%- for column in carried + ['replicate'] %}
        streams.{{ column }},
        {%- endfor %}
        (streams.h + draws.draw) % {{ bootstrap_prime() }} as h
    from {{ prefix }}_replicate_2 as streams
    {{ lateral_range('streams.n_cases', 'draw', 'draws') }}
),

{{ bootstrap_mix_stages(prefix ~ '_draw', carried + ['replicate'], 4) }}

{{ prefix }}_multiplicities as (
    select {{ keys | join(', ') }}, replicate, h % n_cases as case_index, count(*) as multiplicity
    from {{ prefix }}_draw_4
    group by {{ keys | join(', ') }}, replicate, h % n_cases
)
{%- endmacro %}
