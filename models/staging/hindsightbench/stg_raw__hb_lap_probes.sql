-- One row per LAP-probe line of each model's latest load of each probe set (the protocol's probes;
-- the lap-sensitivity re-probes at other temperatures and samples); duplicates are kept (pooled).
with source as (
    select *, load_id = max(load_id) over (partition by model_key, probe_set) as is_current
    from {{ source('raw', 'hb_lap_probes') }}
)

select model_key, line_number, decision_date, rep, answer, probe_set, temperature, load_id
from source
where is_current
