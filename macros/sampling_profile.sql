{#- The sampling profile a kind of request carries (seeds/sampling_profiles.csv, chosen per kind by
    the var `sampling_profiles`): `sampling_profile_relation(kind)` is a one-row relation to cross join,
    `sampling_profile_columns(alias)` its columns as every requests mart shows them (`temperature`: an
    expression that overrides the profile's where it is not NULL, as a re-probe at another temperature). A profile that
    is missing or of another kind fails tests/dbt/assert_sampling_profiles_resolve.sql, so a typo
    cannot silently empty a requests mart. -#}
{% macro sampling_profile_relation(kind) -%}
    (
        select *
        from {{ ref('sampling_profiles') }}
        where profile = '{{ var("sampling_profiles")[kind] }}'
          and request_kind = '{{ kind }}'
    )
{%- endmacro %}

{% macro sampling_profile_columns(alias, temperature=none) -%}
    {{ alias }}.profile as sampling_profile,
        {% if temperature is none %}{{ alias }}.temperature{% else %}coalesce({{ temperature }}, {{ alias }}.temperature) as temperature{% endif %},
        {{ alias }}.max_output_tokens,
        {{ alias }}.response_format,
        {{ alias }}.reasoning_effort,
        {{ alias }}.thinking_budget,
        {{ alias }}.samples
{%- endmacro %}
