-- One row per sketch of each model's latest load; direction '+' bullish, '-' bearish.
with source as (
    select *, load_id = max(load_id) over (partition by model_key) as is_current
    from {{ source('raw', 'hb_sketches') }}
)

select model_key, arm, rep, decision_date, sketch_index, direction, hypothesis_id, load_id
from source
where is_current
