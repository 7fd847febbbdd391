-- Assert that the SQL twin of the metric estimator (macros/metric_estimates_sql.sql, what the Spark
-- target builds) gives the Python model's rows on this warehouse: the same cells, counts equal,
-- estimates, intervals (under the build's ci_method), SEs and MDEs within 1e-9. Both groupings of
-- int_metric_estimates and int_metric_estimates_by_eval_target, on the cohorts of at most
-- var('bootstrap_sql_check_max_cases') cases (the SQL bootstrap joins every case sum with every
-- replicate). DuckDB only: there the Python models are the ones built.
{{ config(enabled=target.type == 'duckdb') }}
{%- set cell = ['grouping', 'cohort', 'model', 'condition', 'prompt_variant', 'metric', 'visibility'] %}
{%- set numbers = ['estimate', 'ci_low', 'ci_high', 'se_clustered', 'mde_80'] %}
{%- set counts = ['n_questions', 'n_cases', 'n_valid', 'n_finite_replicates', 'bootstrap_replicates', 'bootstrap_seed'] %}
{%- set relations = {
    'int_metric_estimates': ['format', 'options_type'],
    'int_metric_estimates_by_eval_target': ['eval_target']} %}
{%- set small = "(select cohort from " ~ ref('int_bootstrap_cases') ~ " group by cohort having max(n_cases) <= "
    ~ var('bootstrap_sql_check_max_cases') ~ ")" %}
{%- for relation, slices in relations.items() %}
{%- set keys = cell + slices %}
{{ 'union all' if not loop.first }}
select '{{ relation }}' as relation, {% for key in cell %}coalesce(python.{{ key }}, twin.{{ key }}) as {{ key }}, {% endfor %}
    {% for key in slices %}coalesce(python.{{ key }}, twin.{{ key }}){{ " || '|' || " if not loop.last }}{% endfor %} as slice,
    python.estimate as python_estimate, twin.estimate as sql_estimate
from (select * from {{ ref(relation) }} where cohort in {{ small }}) as python
full outer join (
    {%- if relation == 'int_metric_estimates' %}
    {{ metric_estimates_sql('format', ['format', 'options_type'],
                            {'overall': ['model', 'condition', 'prompt_variant', 'metric', 'visibility']},
                            max_cases=var('bootstrap_sql_check_max_cases')) }}
    {%- else %}
    {{ metric_estimates_sql('eval_target', ['eval_target'], max_cases=var('bootstrap_sql_check_max_cases')) }}
    {%- endif %}
) as twin
    on {% for key in keys %}twin.{{ key }} is not distinct from python.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
where python.cohort is null or twin.cohort is null
    {%- for column in counts %}
    or twin.{{ column }} is distinct from python.{{ column }}
    {%- endfor %}
    or twin.ci_method is distinct from python.ci_method
    {%- for column in numbers %}
    or (twin.{{ column }} is null) <> (python.{{ column }} is null)
    or abs(twin.{{ column }} - python.{{ column }}) > 1e-9
    {%- endfor %}
{%- endfor %}
