{#- The rows of RELATION as frame NAME of the table function hindsight_frames
    (ingest/spark/functions.py): one JSON object a row, nulls kept, and one row of nulls when the
    relation is empty, so the frame still has its columns. -#}
{% macro frame_rows(name, relation) -%}
    select '{{ name }}' as frame, to_json(struct(rows.*), map('ignoreNullFields', 'false')) as payload
    from (select 1 as present) as marker
    left join {{ relation }} as rows on true
{%- endmacro %}

{#- int_validation_agreement's columns (ingest/stats/validation_agreement.py COLUMNS), for from_json -#}
{% macro validation_agreement_columns() -%}
    design_id string, cohort string, item string, judge_model string, statistic string, estimate double,
    ci_low double, ci_high double, n_questions bigint, n_cases bigint, n_assessments bigint,
    n_finite_replicates bigint, bootstrap_replicates bigint
{%- endmacro %}

{#- The columns this model declares (its YAML's name and data_type, in order) as a schema for
    from_json: a Spark model reads a frame function's JSON rows with it. -#}
{% macro declared_columns() -%}
    {%- if not execute %}{{ return('') }}{% endif %}    {#- the YAML's columns reach a model after parsing -#}
    {%- set columns = [] %}
    {%- for column in model.columns.values() %}
        {%- if not column.data_type %}
            {{ exceptions.raise_compiler_error(model.name ~ ": column " ~ column.name ~ " has no data_type in its YAML, "
                ~ "which the Spark model reads its rows with: declare one") }}
        {%- endif %}
        {%- do columns.append(column.name ~ ' ' ~ column.data_type) %}
    {%- endfor %}
    {%- if not columns %}
        {{ exceptions.raise_compiler_error(model.name ~ " declares no columns in its YAML: the Spark model needs them") }}
    {%- endif %}
    {{- columns | join(', ') -}}
{%- endmacro %}

{#- The model's HindsightBench parameters (its config keys hb_* and bootstrap_seed, as the Python
    model's dbt.config.get has them) as JSON text for a frame function. -#}
{% macro frame_parameters() -%}
    {%- set parameters = {} %}
    {%- for key, value in model.config.items() if key.startswith('hb_') or key == 'bootstrap_seed' %}
        {%- do parameters.update({key: value | string}) %}
    {%- endfor %}
    {{- "'" ~ spark__escape_single_quotes(tojson(parameters)) ~ "'" -}}
{%- endmacro %}

{#- The rows of the frame function FUNCTION (ingest/spark/functions.py FRAME_FUNCTIONS) over the
    relation FRAMES (frame, payload[, part]), one task each value of `part` when PARTITIONED, else
    one task; typed by the model's declared columns. -#}
{% macro frame_function_rows(function, frames, partitioned=false) -%}
    select rows.row.*
    from (
        select from_json(payload, '{{ declared_columns() }}') as row
        from hindsight_frames(
            TABLE({{ frames }}) {{ 'PARTITION BY (part)' if partitioned else 'WITH SINGLE PARTITION' }},
            '{{ function }}', {{ frame_parameters() }})
    ) as rows
{%- endmacro %}
