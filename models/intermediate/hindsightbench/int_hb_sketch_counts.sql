-- One row per model x arm x date: sketches pooled over reps (sketch-level pooling), with bearish and
-- bullish counts. Arm `W_fake` re-keys each W date's sketches to its transplant date fake(d), and
-- `W72_fake` the control arm W72's to its month-preserving one (never mixed with W);
-- arms `R_batch` and `D_batch` keep only the replicates R and D share, for E1 within batch
-- (paper §5.1: pooling R at one replicate with D at three shifts a row by 6.5pp).
with all_sketches as (
    select model_key, arm, rep, decision_date, direction from {{ ref('int_hb_sketches') }}
),

shared_reps as (
    select model_key, rep
    from all_sketches
    where arm in ('R', 'D')
    group by model_key, rep
    having count(distinct arm) = 2
),

sketches as (
    select model_key, arm, decision_date, direction from all_sketches
    union all
    select all_sketches.model_key, all_sketches.arm || '_batch' as arm, all_sketches.decision_date, all_sketches.direction
    from all_sketches
    inner join shared_reps
        on shared_reps.model_key = all_sketches.model_key and shared_reps.rep = all_sketches.rep
    where all_sketches.arm in ('R', 'D')
),

dates as (
    select decision_date, fake_date, control_fake_date from {{ ref('int_hb_dates') }}
),

counts as (
    select
        model_key, arm, decision_date,
        count(*) as n_sketches,
        count(*) filter (where direction = '-') as n_bearish,
        count(*) filter (where direction = '+') as n_bullish
    from sketches
    group by all
),

final as (
    select * from counts
    union all
    select counts.model_key, 'W_fake' as arm, dates.fake_date as decision_date, counts.n_sketches, counts.n_bearish, counts.n_bullish
    from counts
    inner join dates on dates.decision_date = counts.decision_date
    where counts.arm = 'W' and dates.fake_date is not null
    union all
    select
        counts.model_key, 'W72_fake' as arm, dates.control_fake_date as decision_date,
        counts.n_sketches, counts.n_bearish, counts.n_bullish
    from counts
    inner join dates on dates.decision_date = counts.decision_date
    where counts.arm = 'W72' and dates.control_fake_date is not null
)

select * from final
