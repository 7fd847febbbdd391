-- Report, HindsightBench robustness: per audit row, the range of E2/E3 over the window perturbations,
-- sign flips and lost significance, the cutoff's displacement across theta and the re-probes and its
-- jackknife span, the W arm's fake-year, true-year and anachronism rates, the masked arm's dated
-- strings, the serving verdict and the checks the row fails (agg_hb_robustness).
select
    robustness.model_key,
    coalesce(audit_rows.display, robustness.model_key) as display,
    audit_rows.e2_est, robustness.e2_min, robustness.e2_max, robustness.e2_sign_flips, robustness.e2_jackknife_sign_flips,
    robustness.e2_significance_lost, robustness.e2_min_retained_share,
    audit_rows.e3_est, robustness.e3_min, robustness.e3_max, robustness.e3_sign_flips, robustness.e3_jackknife_sign_flips,
    robustness.e3_significance_lost, robustness.e3_min_retained_share,
    robustness.excluded_perturbations,
    robustness.cutoff_month, robustness.cutoff_theta_displacement_max, robustness.cutoff_reprobe_displacement_max,
    robustness.jk_cutoff_min, robustness.jk_cutoff_max, robustness.jk_agree_pct, robustness.lap_series,
    robustness.w_fake_year_rate, robustness.w_true_year_rate, robustness.w_anachronism_rate, robustness.m_monthyear_rate,
    robustness.serving_verdict, robustness.serving_pairs, robustness.failed_checks
from {{ ref('agg_hb_robustness') }} as robustness
inner join {{ ref('agg_hb_audit_rows') }} as audit_rows on audit_rows.model_key = robustness.model_key
order by audit_rows.e2_est desc nulls last, robustness.model_key
