-- One row per model x arm x decision date: pooled sketches and their bearish share (what the
-- audit's gaps are made of; arm W_fake is W re-keyed to the transplant dates).
with counts as (
    select * from {{ ref('int_hb_sketch_counts') }}
),

dates as (
    select decision_date, period, date_window from {{ ref('int_hb_dates') }}
)

select
    counts.model_key,
    counts.arm,
    counts.decision_date,
    dates.period,
    dates.date_window,
    cast(counts.n_sketches as integer) as n_sketches,
    cast(counts.n_bearish as integer) as n_bearish,
    cast(counts.n_bearish as double) / counts.n_sketches as bearish_share
from counts
left join dates on dates.decision_date = counts.decision_date
