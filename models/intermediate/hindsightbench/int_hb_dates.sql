-- One row per decision date of the audit: the 240 PRE dates (with their index, the transplant
-- date fake(d) = PRE[(i + var hb_transplant_shift) mod 240], the W72 control arm's month-preserving
-- PRE[(i + var hb_control_shift) mod 240] and the crisis/calm window) and the 18 POST dates, each with
-- the realized 20-day direction of the first trading day on or after it (NULL when missing).
with pre as (
    select decision_date, date_index from {{ ref('stg_raw__hb_panel_dates') }}
),

post as (
    select decision_date
    from {{ month_starts(var('hb_post_first_date'), var('hb_post_last_date'), 'decision_date') }} as months
),

dates as (
    select
        pre.decision_date,
        'pre' as period,
        pre.date_index,
        transplant.decision_date as fake_date,
        control.decision_date as control_fake_date
    from pre
    left join pre as transplant
        on transplant.date_index = (pre.date_index + {{ var('hb_transplant_shift') }}) % (select count(*) from pre)
    left join pre as control
        on control.date_index = (pre.date_index + {{ var('hb_control_shift') }}) % (select count(*) from pre)
    union all
    select decision_date, 'post' as period, null as date_index, null as fake_date, null as control_fake_date from post
),

spx as (
    select * from {{ ref('stg_raw__hb_spx') }}
),

realized as (
    select
        dates.decision_date,
        min_by(spx.forward_return_20d, spx.trading_date) as forward_return_20d
    from dates
    left join spx on spx.trading_date >= dates.decision_date
    group by dates.decision_date
),

final as (
    select
        dates.decision_date,
        dates.period,
        dates.date_index,
        dates.fake_date,
        dates.control_fake_date,
        windows.date_window,
        windows.position as window_position,
        case when realized.forward_return_20d >= 0 then 1
             when realized.forward_return_20d < 0 then -1 end as realized_direction
    from dates
    left join {{ ref('hb_date_windows') }} as windows on windows.decision_date = dates.decision_date
    left join realized on realized.decision_date = dates.decision_date
)

select * from final
