-- One row per call to a model, for cost and latency analysis and for the token usage an export
-- reports (fct_answers.call_id joins an answer to its call).
{{ config(materialized='view') }}
with calls as (
    select * from {{ ref('stg_raw__llm_calls') }}
)

select * from calls
