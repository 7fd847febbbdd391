{#- agg_pair_coverage's change detection (docs/architecture.md#the-incremental-pattern): the answer
    requests' signature, their number and the order-free sum of their keys' hashes, taken once when
    the model compiles (just before it runs; none in its unit test, whose refs are fixtures). -#}
{% macro requests_signature() -%}
    {%- if not (execute and model.resource_type == 'model' and load_relation(ref('fct_answer_requests')) is not none) -%}
        {{- return(none) -}}
    {%- endif -%}
    {{- return(run_query("select count(*) || ':' || coalesce(sum(" ~ hash64(['question_id', 'condition', 'visibility',
        'prompt_variant', 'narrative_model']) ~ "), 0) from " ~ ref('fct_answer_requests')).columns[0].values()[0]) -}}
{%- endmacro %}

{#- True when this incremental model's stored rows were counted against requests of SIGNATURE: compared
    before the query, so that an unchanged set of requests leaves the filter on scored_at that skips the
    stored answers. -#}
{% macro requests_unchanged_since_stored(signature) -%}
    {%- if not (is_incremental() and execute) -%}
        {{- return(false) -}}
    {%- endif -%}
    {{- return(run_query("select any_value(requests_signature) from " ~ this).columns[0].values()[0] == signature) -}}
{%- endmacro %}
