-- One row per model x arm: the bearish share over the crisis and the calm PRE windows and the gap
-- between them (undefined when a window has no sketch). E1 = gap(R) - gap(D), E2 = gap(D) -
-- gap(M), E3 = gap(W_fake) - gap(W).
with shares as (
    select * from {{ ref('agg_hb_bearish_shares') }}
    where period = 'pre' and date_window is not null
),

windows as (
    select
        model_key,
        arm,
        sum(n_bearish) filter (where date_window = 'crisis') / nullif(sum(n_sketches) filter (where date_window = 'crisis'), 0) as crisis_share,
        sum(n_bearish) filter (where date_window = 'calm') / nullif(sum(n_sketches) filter (where date_window = 'calm'), 0) as calm_share
    from shares
    group by model_key, arm
)

select model_key, arm, crisis_share, calm_share, crisis_share - calm_share as gap
from windows
