-- One row per S&P 500 trading day with its 20-day forward log return (NaN read as NULL).
with source as (
    select distinct trading_date, forward_return_20d from {{ source('raw', 'hb_spx') }}
)

select trading_date, case when isnan(forward_return_20d) then null else forward_return_20d end as forward_return_20d
from source
