{#- The rows of RELATION as frame NAME of the table function hindsight_frames
    (ingest/spark/functions.py): one JSON object a row, nulls kept, and one row of nulls when the
    relation is empty, so the frame still has its columns. -#}
{% macro frame_rows(name, relation) -%}
    select '{{ name }}' as frame, to_json(struct(rows.*), map('ignoreNullFields', 'false')) as payload
    from (select 1 as present) as marker
    left join {{ relation }} as rows on true
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

{#- The model's parameters (its config keys hb_* and bootstrap_*, as the Python model's
    dbt.config.get has them) as JSON text for a frame function. -#}
{% macro frame_parameters() -%}
    {%- set parameters = {} %}
    {%- for key, value in model.config.items() if key.startswith('hb_') or key.startswith('bootstrap_') %}
        {%- do parameters.update({key: value | string}) %}
    {%- endfor %}
    {{- "'" ~ spark__escape_single_quotes(tojson(parameters)) ~ "'" -}}
{%- endmacro %}

{#- The rows of the frame function FUNCTION (ingest/spark/functions.py FRAME_FUNCTIONS), typed by the
    model's declared columns. FRAMES: a list of (frame name, relation), sent in one task; or the name
    of a relation (frame, payload, part) already packed, sent one task per value of `part`. -#}
{% macro frame_function_rows(function, frames) -%}
    {%- set partitioned = frames is string %}
    with {% if partitioned %}packed as (select * from {{ frames }}){% else %}packed as (
        {%- for name, relation in frames %}
        {{ frame_rows(name, relation) }}
        {{- '\n        union all' if not loop.last }}
        {%- endfor %}
    ){% endif %}

    select rows.row.*
    from (
        select from_json(payload, '{{ declared_columns() }}') as row
        from hindsight_frames(
            TABLE(packed) {{ 'PARTITION BY (part)' if partitioned else 'WITH SINGLE PARTITION' }},
            '{{ function }}', {{ frame_parameters() }})
    ) as rows
{%- endmacro %}
