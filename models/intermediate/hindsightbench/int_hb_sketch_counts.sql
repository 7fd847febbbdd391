-- One row per model x arm x date: sketches pooled over reps (sketch-level pooling), with bearish and
-- bullish counts. Arm `W_fake` re-keys each W date's sketches to its transplant date fake(d).
with sketches as (
    select model_key, arm, decision_date, direction from {{ ref('stg_raw__hb_sketches') }}
),

dates as (
    select decision_date, fake_date from {{ ref('int_hb_dates') }}
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
    select counts.model_key, 'W_fake', dates.fake_date, counts.n_sketches, counts.n_bearish, counts.n_bullish
    from counts
    inner join dates on dates.decision_date = counts.decision_date
    where counts.arm = 'W' and dates.fake_date is not null
)

select * from final
