-- One row per model x arm: the bearish share over the crisis and the calm PRE windows, the gap
-- between them (undefined when a window has no sketch) and how many window dates have sketches
-- (the sample-parity gate needs all 11 crisis and 36 calm dates on both sides of a contrast).
-- E1 = gap(R_batch) - gap(D_batch), E2 = gap(D) - gap(M), E3 = gap(W_fake) - gap(W).
with shares as (
    select * from {{ ref('agg_hb_bearish_shares') }}
    where period = 'pre' and date_window is not null
),

windows as (
    select
        model_key,
        arm,
        sum(n_bearish) filter (where date_window = 'crisis') / nullif(sum(n_sketches) filter (where date_window = 'crisis'), 0) as crisis_share,
        sum(n_bearish) filter (where date_window = 'calm') / nullif(sum(n_sketches) filter (where date_window = 'calm'), 0) as calm_share,
        count(distinct decision_date) filter (where date_window = 'crisis' and n_sketches > 0) as crisis_dates_covered,
        count(distinct decision_date) filter (where date_window = 'calm' and n_sketches > 0) as calm_dates_covered
    from shares
    group by model_key, arm
)

select
    model_key, arm, crisis_share, calm_share, crisis_share - calm_share as gap,
    cast(crisis_dates_covered as integer) as crisis_dates_covered,
    cast(calm_dates_covered as integer) as calm_dates_covered,
    crisis_dates_covered = (select count(*) from {{ ref('hb_date_windows') }} as crisis where crisis.date_window = 'crisis')
        and calm_dates_covered = (select count(*) from {{ ref('hb_date_windows') }} as calm where calm.date_window = 'calm')
        as covers_windows
from windows
