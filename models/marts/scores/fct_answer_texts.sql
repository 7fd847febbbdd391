-- One row per stored answer: the text the model gave and its evidence, apart from the scored fact
-- (fct_answers, joined on response_id) so that the wide texts are read only where a user needs them.
{{ config(materialized='view') }}
with responses as (
    select * from {{ ref('stg_raw__responses') }}
)

select response_id, answer, evidence
from responses
