-- One row per stored answer: the text the model gave and its evidence, apart from the scored fact
-- (fct_answers, joined on response_id or, faster, response_key) so that the wide texts are read only
-- where a user needs them. The model that gave it is here too: the texts of one model are read
-- without a join, and the snapshot publishes them a file per model (publish_partition_by).
{{ config(materialized='view') }}
with responses as (
    select * from {{ ref('stg_raw__responses') }}
)

select
    response_id,
    response_key,
    model,
    answer,
    evidence
from responses
