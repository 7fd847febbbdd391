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
