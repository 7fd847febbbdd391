-- One row per audited model: its robustness summary and which checks it fails (never hidden; the
-- leaderboard and the report mark them). window: a significant E2/E3 (CI excludes zero) that flips
-- sign under a window perturbation (jackknife apart) or keeps less than hb_robust_min_retained_share
-- of itself without one event block; cutoff: the cutoff moves more than
-- hb_robust_max_cutoff_displacement months across theta or the re-probes, or the rep jackknife
-- agrees with it in less than hb_robust_min_jackknife_agree_pct percent of subsets; transcript: more
-- W replies than hb_robust_max_w_leak_rate name the true year or an anachronism; serving: a declared
-- serving pair is UNSTABLE.
with perturbations as (
    select * from {{ ref('agg_hb_window_perturbation') }}
),

frozen as (
    select model_key, endpoint, estimate, ci_excludes_zero
    from perturbations
    where perturbation = 'none'
),

window_summary as (
    select
        perturbations.model_key,
        perturbations.endpoint,
        any_value(frozen.estimate) as estimate,
        coalesce(any_value(frozen.ci_excludes_zero), false) as is_significant,
        min(perturbations.estimate) filter (where perturbations.estimate is not null) as estimate_min,
        max(perturbations.estimate) filter (where perturbations.estimate is not null) as estimate_max,
        count(*) filter (where not perturbations.sign_held and perturbations.family != 'jackknife') as sign_flips,
        count(*) filter (where not perturbations.sign_held and perturbations.family = 'jackknife') as jackknife_sign_flips,
        count(*) filter (where perturbations.family in ('drop_event') and frozen.ci_excludes_zero
            and not coalesce(perturbations.ci_excludes_zero, false)) as significance_lost,
        min(perturbations.estimate / nullif(frozen.estimate, 0)) filter (where perturbations.family = 'drop_event') as min_retained_share,
        count(*) filter (where perturbations.excluded_reason is not null) as excluded
    from perturbations
    inner join frozen on frozen.model_key = perturbations.model_key and frozen.endpoint = perturbations.endpoint
    group by perturbations.model_key, perturbations.endpoint
),

windows as (
    select
        model_key,
        max(estimate_min) filter (where endpoint = 'E2') as e2_min,
        max(estimate_max) filter (where endpoint = 'E2') as e2_max,
        max(sign_flips) filter (where endpoint = 'E2') as e2_sign_flips,
        max(jackknife_sign_flips) filter (where endpoint = 'E2') as e2_jackknife_sign_flips,
        max(significance_lost) filter (where endpoint = 'E2') as e2_significance_lost,
        max(min_retained_share) filter (where endpoint = 'E2') as e2_min_retained_share,
        max(estimate_min) filter (where endpoint = 'E3') as e3_min,
        max(estimate_max) filter (where endpoint = 'E3') as e3_max,
        max(sign_flips) filter (where endpoint = 'E3') as e3_sign_flips,
        max(jackknife_sign_flips) filter (where endpoint = 'E3') as e3_jackknife_sign_flips,
        max(significance_lost) filter (where endpoint = 'E3') as e3_significance_lost,
        max(min_retained_share) filter (where endpoint = 'E3') as e3_min_retained_share,
        sum(excluded) as excluded_perturbations,
        bool_or(is_significant and (sign_flips > 0 or min_retained_share < {{ var('hb_robust_min_retained_share') }}))
            as window_fails,
        {{ ordered_string_agg("case when is_significant and (sign_flips > 0 or min_retained_share < "
            ~ var('hb_robust_min_retained_share') ~ ") then endpoint end", "'+'", 'endpoint') }} as window_failed_endpoints
    from window_summary
    group by model_key
),

lap as (
    select
        model_key,
        max(abs(displacement_months)) filter (where is_reference_series) as cutoff_theta_displacement_max,
        max(abs(displacement_months)) filter (where not is_reference_series
            and theta = {{ var('hb_lap_threshold') }}) as cutoff_reprobe_displacement_max,
        max(cutoff_month) filter (where is_reference_cell) as cutoff_month,
        max(jk_cutoff_min) filter (where is_reference_cell) as jk_cutoff_min,
        max(jk_cutoff_max) filter (where is_reference_cell) as jk_cutoff_max,
        max(jk_agree_pct) filter (where is_reference_cell) as jk_agree_pct,
        count(distinct temperature || '/' || samples) as lap_series
    from {{ ref('agg_hb_lap_sensitivity') }}
    group by model_key
),

transcripts as (
    select
        model_key,
        max(fake_year_rate) filter (where arm = 'W') as w_fake_year_rate,
        max(true_year_rate) filter (where arm = 'W') as w_true_year_rate,
        max(anachronism_rate) filter (where arm = 'W') as w_anachronism_rate,
        max(monthyear_rate) filter (where arm = 'M') as m_monthyear_rate
    from {{ ref('agg_hb_transcript_audit') }}
    group by model_key
),

serving as (
    select model_key, max(verdict) as serving_verdict, {{ sorted_distinct_string_agg('other_key', "', '") }} as serving_pairs
    from (
        select reference_key as model_key, variant_key as other_key, verdict from {{ ref('agg_hb_serving_stability') }} where endpoint = 'E2'
        union all
        select variant_key, reference_key, verdict from {{ ref('agg_hb_serving_stability') }} where endpoint = 'E2'
    )
    group by model_key
),

models as (
    select model_key, row_version from {{ ref('agg_hb_audit_rows') }}
),

checked as (
    select
        models.model_key,
        models.row_version,
        windows.e2_min,
        windows.e2_max,
        cast(windows.e2_sign_flips as integer) as e2_sign_flips,
        cast(windows.e2_jackknife_sign_flips as integer) as e2_jackknife_sign_flips,
        cast(windows.e2_significance_lost as integer) as e2_significance_lost,
        windows.e2_min_retained_share,
        windows.e3_min,
        windows.e3_max,
        cast(windows.e3_sign_flips as integer) as e3_sign_flips,
        cast(windows.e3_jackknife_sign_flips as integer) as e3_jackknife_sign_flips,
        cast(windows.e3_significance_lost as integer) as e3_significance_lost,
        windows.e3_min_retained_share,
        cast(windows.excluded_perturbations as integer) as excluded_perturbations,
        lap.cutoff_month,
        lap.cutoff_theta_displacement_max,
        lap.cutoff_reprobe_displacement_max,
        lap.jk_cutoff_min,
        lap.jk_cutoff_max,
        case when lap.jk_cutoff_min is not null
            then (cast(left(lap.jk_cutoff_max, 4) as integer) * 12 + cast(right(lap.jk_cutoff_max, 2) as integer))
                - (cast(left(lap.jk_cutoff_min, 4) as integer) * 12 + cast(right(lap.jk_cutoff_min, 2) as integer))
        end as jk_cutoff_span_months,
        lap.jk_agree_pct,
        cast(lap.lap_series as integer) as lap_series,
        transcripts.w_fake_year_rate,
        transcripts.w_true_year_rate,
        transcripts.w_anachronism_rate,
        transcripts.m_monthyear_rate,
        serving.serving_verdict,
        serving.serving_pairs,
        coalesce(windows.window_fails, false) as window_fails,
        windows.window_failed_endpoints,
        coalesce(greatest(lap.cutoff_theta_displacement_max, lap.cutoff_reprobe_displacement_max)
                > {{ var('hb_robust_max_cutoff_displacement') }}
            or lap.jk_agree_pct < {{ var('hb_robust_min_jackknife_agree_pct') }}, false) as cutoff_fails,
        coalesce(greatest(transcripts.w_true_year_rate, transcripts.w_anachronism_rate) > {{ var('hb_robust_max_w_leak_rate') }}, false)
            as transcript_fails,
        coalesce(serving.serving_verdict = 'UNSTABLE', false) as serving_fails
    from models
    left join windows on windows.model_key = models.model_key
    left join lap on lap.model_key = models.model_key
    left join transcripts on transcripts.model_key = models.model_key
    left join serving on serving.model_key = models.model_key
),

final as (
    select
        *,
        nullif(concat_ws(', ',
            case when window_fails then 'window (' || window_failed_endpoints || ')' end,
            case when cutoff_fails then 'cutoff' end,
            case when transcript_fails then 'transcript' end,
            case when serving_fails then 'serving' end
        ), '') as failed_checks
    from checked
)

select * from final
