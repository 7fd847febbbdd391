-- One row per pre-cutoff V1 request (decision date) of the latest panel load.
with source as (
    select *, load_id = max(load_id) over () as is_current
    from {{ source('raw', 'hb_panel_requests') }}
)

select decision_date, request_key, system_text, user_text, load_id
from source
where is_current
