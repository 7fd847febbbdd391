-- One row per stored answer: the text the model gave and its evidence, apart from the scored fact
-- (fct_answers, joined on response_id or, faster, response_key) so that the wide texts are read only
-- where a user needs them.
{{ config(materialized='view') }}
with responses as (
    select * from {{ ref('stg_raw__responses') }}
)

select
    response_id,
    response_key,
    answer,
    evidence
from responses
