{# Integer keys of the metric cells: int_metric_case_sums stores only numbers (a cell key and a
   case index per row), int_metric_cells the labels of each key; both compute keys with these.
   A cell is an answer cell (model x condition x prompt_variant x visibility, 'paired' for pairs)
   x metric x question slice (cohort x format x options_type x eval_target). The engine's hash is
   stable within a build, and both tables are rebuilt by every build. #}
{% macro metric_answer_cell_key(model, condition, prompt_variant, visibility) -%}
    {{ hash64([model, condition, prompt_variant, visibility]) }}
{%- endmacro %}

{% macro metric_slice_key(cohort, format, options_type, eval_target) -%}
    {{ hash64([cohort, format, 'coalesce(' ~ options_type ~ ", '')", eval_target]) }}
{%- endmacro %}

{% macro metric_cell_key(answer_cell_key, metric, slice_key) -%}
    {{ hash64([answer_cell_key, metric, slice_key]) }}
{%- endmacro %}

{#- one metric's per-case sum in int_metric_case_sums: its name, the sum and counts of the questions
    that have a value (NULL: not defined for the eval target, or not judged yet), and the newest
    score among them. `alone`: the sum over one question's row, without a group by (the same values
    and types as the aggregates give for a group of that one row) -#}
{% macro metric_case_sum(value, is_valid, scored_through, alone=false) -%}
    {%- if alone %}
    {{ struct_of([('metric', "'" ~ value.split('.')[-1] ~ "'"), ('value_sum', value),
                  ('n_questions', 'cast(' ~ value ~ ' is not null as bigint)'),
                  ('n_valid', 'cast(' ~ value ~ ' is not null and coalesce(' ~ is_valid ~ ', false) as bigint)'),
                  ('scored_through', 'case when ' ~ value ~ ' is not null then ' ~ scored_through ~ ' end')]) }}
    {%- else %}
    {{ struct_of([('metric', "'" ~ value.split('.')[-1] ~ "'"), ('value_sum', 'sum(' ~ value ~ ')'),
                  ('n_questions', 'count(' ~ value ~ ')'),
                  ('n_valid', 'count(' ~ value ~ ') filter (where ' ~ is_valid ~ ')'),
                  ('scored_through', 'max(' ~ scored_through ~ ') filter (where ' ~ value ~ ' is not null)')]) }}
    {%- endif %}
{%- endmacro %}

{#- the per-case sums of each of METRICS of a source's rows NAME (metric_case_sum per metric) -#}
{% macro metric_case_sums(name, metrics, is_valid, alone) -%}
    {%- set sums = [] %}
    {%- for metric in metrics %}
        {%- do sums.append(metric_case_sum(name ~ '.' ~ metric, name ~ '.is_valid', name ~ '.scored_through', alone)) %}
    {%- endfor %}
    {{- return(sums) }}
{%- endmacro %}
