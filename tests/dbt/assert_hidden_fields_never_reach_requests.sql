-- Assert that hidden evaluation fields never reach the requests the runner sends: no such column
-- exists in fct_answer_requests, and every question_json holds exactly question, format, options.
with hidden_columns as (
    select column_name as problem
    from information_schema.columns
    where table_name = 'fct_answer_requests'
      and table_schema = '{{ ref("fct_answer_requests").schema }}'
      and lower(column_name) in (
          'correct_answer', 'hindsight_trap', 'hindsight_trap_explanation', 'eval_target',
          'reference_time', 'early_cutoff', 'cutoff_event', 'cutoff_hours', 'options_type'
      )
),

question_keys as (
    select
        request_id,
        list_sort(json_keys(cast(question_json as json))) as keys
    from {{ ref('fct_answer_requests') }}
),

bad_question_json as (
    select 'question_json keys ' || cast(keys as varchar) || ' in ' || request_id as problem
    from question_keys
    where keys <> ['format', 'options', 'question']
)

select problem from hidden_columns
union all
select problem from bad_question_json
