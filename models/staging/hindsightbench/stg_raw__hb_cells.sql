-- One row per HindsightBench arm cell of each model's latest load.
with source as (
    select *, load_id = max(load_id) over (partition by model_key) as is_current
    from {{ source('raw', 'hb_cells') }}
)

select model_key, arm, rep, decision_date, cell_path, cell_status, valid_count, invalid_count, load_id
from source
where is_current
