-- One row per PRE date (the V1 panel's distinct decision dates), with its 0-based index.
with source as (
    select distinct decision_date from {{ source('raw', 'hb_panel_dates') }}
)

select decision_date, cast(row_number() over (order by decision_date) - 1 as integer) as date_index
from source
