{#- What an incremental model's stored rows were computed by (docs/architecture.md#the-incremental-pattern):
    an md5 of this model's SQL, the SQL of the MODELS whose logic it repeats or reads, and EXTRA (a
    version or setting that changes its output). A row stored under another fingerprint is computed
    again. -#}
{% macro code_fingerprint(models=[], extra='') -%}
    {%- set nodes = graph.get('nodes', {}) if execute else {} -%}
    {%- set code = [model.get('raw_code', '')] -%}
    {%- for name in models -%}
        {%- do code.append(nodes.get('model.hindsight.' ~ name, {}).get('raw_code', '')) -%}
    {%- endfor -%}
    {{- return(local_md5(code | join('') ~ extra)) -}}
{%- endmacro %}

{#- True when a row of this incremental model was stored under another fingerprint than FINGERPRINT
    (in COLUMN): asked before the model's query runs, so that the query of a build whose code did not
    change filters on the load mark alone (DuckDB then skips the stored row groups). -#}
{% macro stored_code_changed(fingerprint, column) -%}
    {%- if not execute -%}
        {{- return(true) -}}
    {%- endif -%}
    {%- set found = run_query("select exists (select 1 from " ~ this ~ " where " ~ column
                              ~ " is distinct from '" ~ fingerprint ~ "')") -%}
    {{- return(found.rows[0][0]) -}}
{%- endmacro %}
