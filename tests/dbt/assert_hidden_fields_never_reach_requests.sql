-- Assert that hidden evaluation fields never reach the requests the runner sends: no such column
-- exists in fct_answer_requests, and every question_json holds exactly question, format, options.
{%- set hidden = ['correct_answer', 'hindsight_trap', 'hindsight_trap_explanation', 'eval_target',
                  'reference_time', 'early_cutoff', 'cutoff_event', 'cutoff_hours', 'options_type'] %}
{%- set found = [] %}
{%- if execute %}
    {%- for column in adapter.get_columns_in_relation(ref('fct_answer_requests')) %}
        {%- if column.name | lower in hidden %}{% do found.append(column.name | lower) %}{% endif %}
    {%- endfor %}
{%- endif %}
with hidden_columns as (
    {%- for name in found %}
    select 'hidden column {{ name }}' as problem
    union all
    {%- endfor %}
    select cast(null as string) as problem where false
),

question_keys as (
    select
        request_id,
        {{ json_sorted_keys('question_json') }} as keys
    from {{ ref('fct_answer_requests') }}
),

bad_question_json as (
    select 'question_json keys ' || coalesce(keys, 'none') || ' in ' || request_id as problem
    from question_keys
    where coalesce(keys, '') <> 'format,options,question'
)

select problem from hidden_columns
union all
select problem from bad_question_json
