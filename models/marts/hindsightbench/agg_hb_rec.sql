-- One row per model x period of the date-recovery probe (REC): pre (decision dates up to var
-- hb_pre_last_date), post (from var hb_post_split_month, the calendar window) and
-- post_model_relative (post dates whose month is after the model's effective cutoff, where recall is
-- measured to be zero: the window §6 of the paper reads as pure inference). Per period: n parsed
-- estimates and the shares with the right year, the right year-month and an estimate within 12
-- months, and the median absolute month offset (NULL shares when n < var hb_rec_min_n).
with probes as (
    select
        *,
        estimated_year * 12 + estimated_month
            - (cast(left(decision_date, 4) as integer) * 12 + cast(substr(decision_date, 6, 2) as integer)) as month_offset
    from {{ ref('int_hb_rec_estimates') }}
    where estimated_year is not null and estimated_month is not null and length(estimated_date) >= 7
),

cutoffs as (
    select model_key, max(decision_month) filter (where lap > {{ var('hb_lap_threshold') }}) as empirical_cutoff
    from {{ ref('agg_hb_lap_series') }}
    group by model_key
),

periods as (
    select probes.*, case when probes.decision_date <= '{{ var("hb_pre_last_date") }}' then 'pre' end as period
    from probes
    union all
    select probes.*, 'post' as period
    from probes
    where decision_date >= '{{ var("hb_post_split_month") }}'
    union all
    select probes.*, 'post_model_relative' as period
    from probes
    inner join cutoffs on cutoffs.model_key = probes.model_key
    where probes.decision_date >= '{{ var("hb_post_split_month") }}' and left(probes.decision_date, 7) > cutoffs.empirical_cutoff
),

scored as (
    select
        model_key,
        period,
        count(*) as n,
        avg(cast(case when estimated_year = cast(left(decision_date, 4) as integer) then 1 else 0 end as double)) as year_share,
        avg(cast(case when month_offset = 0 then 1 else 0 end as double)) as year_month_share,
        avg(cast(case when abs(month_offset) <= 12 then 1 else 0 end as double)) as within_12_months_share,
        median(abs(month_offset)) as median_abs_month_offset
    from periods
    where period is not null
    group by model_key, period
)

select
    model_key,
    period,
    cast(n as integer) as n,
    case when n >= {{ var('hb_rec_min_n') }} then year_share end as year_share,
    case when n >= {{ var('hb_rec_min_n') }} then year_month_share end as year_month_share,
    case when n >= {{ var('hb_rec_min_n') }} then within_12_months_share end as within_12_months_share,
    median_abs_month_offset
from scored
