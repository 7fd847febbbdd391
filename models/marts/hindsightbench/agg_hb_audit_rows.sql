-- One row per audited model (its registry's latest row version): the published bench_rows.csv
-- columns (key as model_key) computed from the raw cells and probes, ungated, plus E1 with its CI,
-- the computed gates (LAP chance test, delta gates and rank, REC n, bootstrap finite replicates)
-- and a reason for every undefined value. Only the rendered leaderboard hides gated cells.
with gaps as (
    select model_key,
        max(gap) filter (where arm = 'R_batch') - max(gap) filter (where arm = 'D_batch') as e1_est,
        bool_and(covers_windows) filter (where arm in ('R_batch', 'D_batch')) and count(*) filter (where arm in ('R_batch', 'D_batch')) = 2 as e1_parity,
        bool_and(covers_windows) filter (where arm in ('D', 'M')) and count(*) filter (where arm in ('D', 'M')) = 2 as e2_parity,
        bool_and(covers_windows) filter (where arm in ('W', 'W_fake')) and count(*) filter (where arm in ('W', 'W_fake')) = 2 as e3_parity,
        max(gap) filter (where arm = 'D') - max(gap) filter (where arm = 'M') as e2_est,
        max(gap) filter (where arm = 'W_fake') - max(gap) filter (where arm = 'W') as e3_est,
        -- the W72 month-preserving control (E3'): its contrast, and its fake-keyed gap against W's
        max(gap) filter (where arm = 'W72_fake') - max(gap) filter (where arm = 'W72') as e3_control_est,
        max(gap) filter (where arm = 'W_fake') - max(gap) filter (where arm = 'W72_fake') as control_gap_shift
    from {{ ref('agg_hb_gaps') }}
    group by model_key
),

estimates as (
    select * from {{ ref('int_hb_audit_estimates') }}
),

lap as (
    select * from {{ ref('agg_hb_lap_series') }}
),

lap_summary as (
    select
        model_key,
        avg(lap) filter (where period = 'pre') as lap_pre,
        avg(lap) filter (where decision_date >= '{{ var("hb_post_first_date")[:7] }}') as lap_post,
        max(decision_month) filter (where lap > {{ var('hb_lap_threshold') }}) as empirical_cutoff
    from lap
    group by model_key
),

post_shares as (
    select
        shares.model_key,
        shares.arm,
        shares.decision_date,
        shares.n_bearish,
        shares.n_sketches,
        left(shares.decision_date, 7) > lap_summary.empirical_cutoff as is_after_cutoff
    from {{ ref('agg_hb_bearish_shares') }} as shares
    inner join lap_summary on lap_summary.model_key = shares.model_key
    where shares.arm in ('D', 'M') and shares.decision_date >= '{{ var("hb_post_split_month") }}'
),

post_dates as (
    -- the POST decision dates the placebo contrast covers (17 with the release's vars)
    select count(*) as n_dates
    from {{ ref('int_hb_dates') }}
    where period = 'post' and decision_date >= '{{ var("hb_post_split_month") }}'
),

post_coverage as (
    select model_key,
        count(distinct decision_date) filter (where arm = 'D' and n_sketches > 0) as d_dates,
        count(distinct decision_date) filter (where arm = 'M' and n_sketches > 0) as m_dates,
        count(distinct decision_date) filter (where n_sketches > 0) as any_dates
    from post_shares
    group by model_key
),

p1 as (
    select
        model_key,
        sum(n_bearish) filter (where arm = 'D') / sum(n_sketches) filter (where arm = 'D')
            - sum(n_bearish) filter (where arm = 'M') / sum(n_sketches) filter (where arm = 'M') as p1_calendar,
        sum(n_bearish) filter (where arm = 'D' and is_after_cutoff) / sum(n_sketches) filter (where arm = 'D' and is_after_cutoff)
            - sum(n_bearish) filter (where arm = 'M' and is_after_cutoff) / sum(n_sketches) filter (where arm = 'M' and is_after_cutoff)
            as p1_after_cutoff
    from post_shares
    group by model_key
),

rec as (
    select model_key,
        max(year_share) filter (where period = 'pre') as rec_pre_year,
        max(n) filter (where period = 'pre') as rec_pre_n,
        max(year_share) filter (where period = 'post') as rec_post_year,
        max(n) filter (where period = 'post') as rec_post_n,
        max(within_12_months_share) filter (where period = 'pre') as rec_pre_within_12,
        max(within_12_months_share) filter (where period = 'post') as rec_post_within_12,
        max(year_share) filter (where period = 'post_model_relative') as rec_post_model_relative_year,
        max(n) filter (where period = 'post_model_relative') as rec_post_model_relative_n
    from {{ ref('agg_hb_rec') }}
    group by model_key
),

cells as (
    select model_key,
        count(*) as cells,
        cast(sum(valid_count) filter (where cell_status = 'sketches') as double) / (8 * count(*)) as valid_sketch_rate
    from {{ ref('int_hb_cells') }}
    where arm != 'W72'          -- VALID is over the four arms' cells; the control arm is reported apart
    group by model_key
),

registry as (
    select * from {{ ref('stg_raw__hb_registry') }}
),

parsers as (
    -- the parser version each model's replied cells were read with (NULL: release files only)
    select model_key, max(parser_version) as parser_version from {{ ref('int_hb_cells') }} group by model_key
),

final as (
    select
        cells.model_key,
        registry.row_version,
        registry.display,
        registry.generation,
        gaps.e1_est, estimates.e1_lo, estimates.e1_hi,
        gaps.e2_est, estimates.e2_lo, estimates.e2_hi,
        gaps.e3_est, estimates.e3_lo, estimates.e3_hi,
        case when coalesce(estimates.lap_at_chance, false) then 'calendar'
             when lap_summary.empirical_cutoff >= '{{ var("hb_post_split_month") }}' then 'model_relative' else 'calendar' end as p1_mode,
        p1.p1_calendar,
        case when not coalesce(estimates.lap_at_chance, false) and lap_summary.empirical_cutoff >= '{{ var("hb_post_split_month") }}'
            then p1.p1_after_cutoff end as p1_model_relative,
        -- counts are 0, never NULL, where nothing was parsed (as the release writes them)
        rec.rec_pre_year, cast(coalesce(rec.rec_pre_n, 0) as integer) as rec_pre_n,
        rec.rec_post_year, cast(coalesce(rec.rec_post_n, 0) as integer) as rec_post_n,
        lap_summary.lap_pre, lap_summary.lap_post, lap_summary.empirical_cutoff,
        cast(estimates.recall_hits as double) / nullif(estimates.recall_n, 0) as recall_hit_rate,
        cast(coalesce(estimates.recall_n, 0) as integer) as recall_n,
        estimates.delta, estimates.delta_t, cast(coalesce(estimates.delta_n, 0) as integer) as delta_n,
        cells.valid_sketch_rate,
        cast(cells.cells as integer) as cells,
        -- protocol pieces beyond the published columns
        rec.rec_pre_within_12, rec.rec_post_within_12,
        rec.rec_post_model_relative_year, cast(coalesce(rec.rec_post_model_relative_n, 0) as integer) as rec_post_model_relative_n,
        gaps.e3_control_est,
        gaps.control_gap_shift,
        abs(gaps.control_gap_shift) <= {{ var('hb_shift_family_band') }} as control_within_band,
        registry.vendor_cutoff,
        registry.vendor_cutoff_read_on,
        -- signed months from the vendor-stated to the measured cutoff (negative: the measurement runs early)
        cast(left(lap_summary.empirical_cutoff, 4) as integer) * 12 + cast(right(lap_summary.empirical_cutoff, 2) as integer)
            - (cast(left(registry.vendor_cutoff, 4) as integer) * 12 + cast(right(registry.vendor_cutoff, 2) as integer)) as cutoff_vs_vendor_months,
        -- the registry row: what the row was measured under
        registry.provider,
        registry.tier,
        registry.sampling,
        registry.serving_quantization,
        registry.thinking_regime,
        registry.retrieval,
        coalesce(parsers.parser_version, registry.parser_version) as parser_version,
        -- computed gates, beside the published flags
        estimates.lap_at_chance,
        estimates.recall_p_value,
        registry.published_lap_at_chance,
        estimates.delta_gate,
        estimates.delta_rank_deficient,
        estimates.delta_lap_variance,
        coalesce(rec.rec_pre_n, 0) < {{ var('hb_rec_min_n') }} as rec_pre_n_gate,
        coalesce(rec.rec_post_n, 0) < {{ var('hb_rec_min_n') }} as rec_post_n_gate,
        cast(estimates.e1_finite_replicates as integer) as e1_finite_replicates,
        cast(estimates.e2_finite_replicates as integer) as e2_finite_replicates,
        cast(estimates.e3_finite_replicates as integer) as e3_finite_replicates,
        -- sample-parity gate (paper §5, note k): a contrast only when both sides cover the full windows
        coalesce(gaps.e1_parity, false) as e1_parity,
        coalesce(gaps.e2_parity, false) as e2_parity,
        coalesce(gaps.e3_parity, false) as e3_parity,
        coalesce(post_coverage.d_dates = post_dates.n_dates and post_coverage.m_dates = post_dates.n_dates, false) as p1_parity,
        concat_ws('; ',
            case when gaps.e2_est is null then 'e2: a crisis or calm window has no D or M sketch' end,
            case when not coalesce(gaps.e1_parity, false) then 'e1: R and D (shared replicates) do not both cover the full windows' end,
            case when not coalesce(gaps.e2_parity, false) then 'e2: D and M do not both cover the full windows (parity gate)' end,
            case when not coalesce(gaps.e3_parity, false) then 'e3: true- and fake-date W keyings do not both cover the full windows' end,
            case when not coalesce(post_coverage.d_dates = post_dates.n_dates and post_coverage.m_dates = post_dates.n_dates, false)
                 then 'p1: D and M do not both cover the ' || post_dates.n_dates || ' post dates' end,
            case when gaps.e3_est is null then 'e3: a window has no W sketch' end,
            case when estimates.e2_lo is null and gaps.e2_est is not null then 'e2 CI: fewer than {{ var("hb_min_finite_replicates") }} finite replicates' end,
            case when estimates.delta is null then 'delta: ' || coalesce(case estimates.delta_gate when 'n' then 'n <= {{ var("hb_delta_min_n") }}'
                 when 'lowvar' then 'population variance of LAP <= {{ var("hb_delta_min_lap_variance") }}' end, 'no usable dates') end,
            case when estimates.delta_rank_deficient then 'delta: design matrix rank-deficient (pseudo-inverse value)' end,
            case when rec.rec_pre_year is null then 'rec_pre: fewer than {{ var("hb_rec_min_n") }} parsed estimates' end,
            case when rec.rec_post_year is null then 'rec_post: fewer than {{ var("hb_rec_min_n") }} parsed estimates' end,
            case when lap_summary.empirical_cutoff is null then 'cutoff: no date with LAP above {{ var("hb_lap_threshold") }}' end,
            case when lap_summary.empirical_cutoff < '{{ var("hb_post_split_month") }}' or coalesce(estimates.lap_at_chance, false)
                 then 'p1_model_relative: at chance or cutoff before {{ var("hb_post_split_month") }}' end
        ) as undefined_reasons
    from cells
    left join gaps on gaps.model_key = cells.model_key
    left join estimates on estimates.model_key = cells.model_key
    left join lap_summary on lap_summary.model_key = cells.model_key
    left join p1 on p1.model_key = cells.model_key
    left join rec on rec.model_key = cells.model_key
    left join post_coverage on post_coverage.model_key = cells.model_key
    left join registry on registry.model_key = cells.model_key
    left join parsers on parsers.model_key = cells.model_key
    cross join post_dates
)

select * from final
