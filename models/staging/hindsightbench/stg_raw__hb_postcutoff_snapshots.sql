-- One row per post-cutoff decision date x series of the latest snapshot load (values as the file spells them).
with source as (
    select *, load_id = max(load_id) over () as is_current
    from {{ source('raw', 'hb_postcutoff_snapshots') }}
)

select decision_date, series_id, vintage_date, vintage_value, revised_value, load_id
from source
where is_current
