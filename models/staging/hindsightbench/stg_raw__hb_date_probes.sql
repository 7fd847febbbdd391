-- One row per date-probe line of each model's latest load (the estimate as stored; int_hb_rec_estimates parses it).
with source as (
    select *, load_id = max(load_id) over (partition by model_key) as is_current
    from {{ source('raw', 'hb_date_probes') }}
)

select model_key, line_number, decision_date, estimated_date, load_id
from source
where is_current
