-- One row per model x probed date: the monthly LAP series (the audit paper's Figure 3), with the
-- period and whether the date clears the var hb_lap_threshold that defines the effective cutoff.
with lap as (
    select * from {{ ref('int_hb_lap_by_date') }}
),

dates as (
    select decision_date, period, realized_direction from {{ ref('int_hb_dates') }}
)

select
    lap.model_key,
    lap.decision_date,
    left(lap.decision_date, 7) as decision_month,
    coalesce(dates.period, 'other') as period,
    cast(lap.n_lines as integer) as n_lines,
    cast(lap.n_up as integer) as n_up,
    cast(lap.n_down as integer) as n_down,
    lap.lap,
    lap.ud,
    lap.lap > {{ var('hb_lap_threshold') }} as is_above_threshold,
    dates.realized_direction
from lap
left join dates on dates.decision_date = lap.decision_date
