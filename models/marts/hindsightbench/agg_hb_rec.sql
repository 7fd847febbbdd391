-- One row per model x period (pre: decision dates up to var hb_pre_last_date; post: from var
-- hb_post_split_month): the
-- date-probe REC - share of parsed estimates with the right year and year-month, the median
-- absolute month offset, and n (NULL shares when n < var hb_rec_min_n).
with probes as (
    select *,
        case when decision_date <= '{{ var("hb_pre_last_date") }}' then 'pre'
             when decision_date >= '{{ var("hb_post_split_month") }}' then 'post' end as period
    from {{ ref('stg_raw__hb_date_probes') }}
    where estimated_year is not null and estimated_month is not null and length(estimated_date) >= 7
),

scored as (
    select
        model_key,
        period,
        count(*) as n,
        avg(case when estimated_year = cast(left(decision_date, 4) as integer) then 1.0 else 0.0 end) as year_share,
        avg(case when estimated_year = cast(left(decision_date, 4) as integer)
                  and estimated_month = cast(substr(decision_date, 6, 2) as integer) then 1.0 else 0.0 end) as year_month_share,
        median(abs((estimated_year * 12 + estimated_month)
                   - (cast(left(decision_date, 4) as integer) * 12 + cast(substr(decision_date, 6, 2) as integer)))) as median_abs_month_offset
    from probes
    where period is not null
    group by model_key, period
)

select
    model_key,
    period,
    cast(n as integer) as n,
    case when n >= {{ var('hb_rec_min_n') }} then year_share end as year_share,
    case when n >= {{ var('hb_rec_min_n') }} then year_month_share end as year_month_share,
    median_abs_month_offset
from scored
