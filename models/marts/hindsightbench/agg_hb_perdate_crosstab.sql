-- One row per audited model x PRE date: the per-date REC/LAP x trigger cross-tab (hindsightbench.md
-- §9). trigger = bearish share of D minus that of M on the date (E2 at date grain); transplant = the
-- W sketches' agreement with the fake date's realized direction minus that with the true date's (E3
-- at date grain); memory = the REC year and year-month hits and the LAP recall hit (sign of UD_d
-- against the realized direction; a tie, all-unknown or no realized direction gives NULL). A date is
-- high-recall when REC got the year or LAP recalled the direction, and above the baseline when its
-- trigger exceeds the model's mean trigger over the calm dates.
with dates as (
    select decision_date, fake_date, date_window, realized_direction
    from {{ ref('int_hb_dates') }}
    where period = 'pre'
),

counts as (
    select * from {{ ref('int_hb_sketch_counts') }}
    where arm in ('D', 'M', 'W')
),

per_date as (
    select
        model_key,
        decision_date,
        sum(n_bearish) filter (where arm = 'D') / nullif(sum(n_sketches) filter (where arm = 'D'), 0)
            - sum(n_bearish) filter (where arm = 'M') / nullif(sum(n_sketches) filter (where arm = 'M'), 0) as trigger_value,
        sum(n_bullish) filter (where arm = 'W') as w_bullish,
        sum(n_bearish) filter (where arm = 'W') as w_bearish,
        sum(n_sketches) filter (where arm = 'W') as w_sketches
    from counts
    group by all
),

rec as (
    select
        model_key,
        decision_date,
        max(cast(estimated_year = cast(left(decision_date, 4) as integer) as integer)) as rec_year_hit,
        max(cast(estimated_year = cast(left(decision_date, 4) as integer)
            and estimated_month = cast(substr(decision_date, 6, 2) as integer) as integer)) as rec_year_month_hit
    from {{ ref('int_hb_rec_estimates') }}
    where estimated_year is not null
    group by all
),

lap as (
    select model_key, decision_date, lap, ud from {{ ref('int_hb_lap_by_date') }}
),

rows as (
    select
        per_date.model_key,
        per_date.decision_date,
        dates.date_window = 'crisis' as is_crisis,
        dates.date_window = 'calm' as is_calm,
        per_date.trigger_value,
        case when per_date.w_sketches > 0 and dates.realized_direction is not null and fake.realized_direction is not null
            then ((case fake.realized_direction when 1 then per_date.w_bullish else per_date.w_bearish end)
                - (case dates.realized_direction when 1 then per_date.w_bullish else per_date.w_bearish end))
                / per_date.w_sketches
        end as transplant_value,
        rec.rec_year_hit,
        rec.rec_year_month_hit,
        lap.lap as lap_share,
        lap.ud as lap_ud,
        case when abs(lap.ud) > 1e-9 and dates.realized_direction is not null
            then cast(sign(lap.ud) = dates.realized_direction as integer) end as lap_recall_hit
    from per_date
    inner join dates on dates.decision_date = per_date.decision_date
    left join dates as fake on fake.decision_date = dates.fake_date
    left join rec on rec.model_key = per_date.model_key and rec.decision_date = per_date.decision_date
    left join lap on lap.model_key = per_date.model_key and lap.decision_date = per_date.decision_date
),

baselines as (
    select model_key, avg(trigger_value) filter (where is_calm and not isnan(trigger_value)) as calm_baseline_trigger
    from rows
    group by model_key
),

registry as (
    select model_key, row_version from {{ ref('stg_raw__hb_registry') }}
),

final as (
    select
        rows.model_key,
        registry.row_version,
        rows.decision_date,
        coalesce(rows.is_crisis, false) as is_crisis,
        coalesce(rows.is_calm, false) as is_calm,
        rows.trigger_value,
        rows.transplant_value,
        rows.rec_year_hit,
        rows.rec_year_month_hit,
        rows.lap_share,
        rows.lap_ud,
        rows.lap_recall_hit,
        baselines.calm_baseline_trigger,
        coalesce(rows.rec_year_hit = 1 or rows.lap_recall_hit = 1, false) as is_high_recall,
        rows.trigger_value > baselines.calm_baseline_trigger as is_above_baseline,
        case when rows.trigger_value is not null
            then (case when coalesce(rows.rec_year_hit = 1 or rows.lap_recall_hit = 1, false) then 'H' else 'L' end)
                || (case when rows.trigger_value > baselines.calm_baseline_trigger then 'H' else 'L' end)
        end as quadrant
    from rows
    inner join baselines on baselines.model_key = rows.model_key
    left join registry on registry.model_key = rows.model_key
)

select * from final
