-- One row per LAP-probe line of each model's latest load; duplicates are kept (they are pooled).
with source as (
    select *, load_id = max(load_id) over (partition by model_key) as is_current
    from {{ source('raw', 'hb_lap_probes') }}
)

select model_key, line_number, decision_date, rep, answer, load_id
from source
where is_current
