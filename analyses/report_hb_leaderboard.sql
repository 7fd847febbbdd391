-- Report, HindsightBench leaderboard: the per-model audit rows with their CIs, gates and the
-- robustness checks they fail (agg_hb_robustness).
select
    audit_rows.model_key, coalesce(display, audit_rows.model_key) as display, generation,
    e1_est, e1_lo, e1_hi, e2_est, e2_lo, e2_hi, e3_est, e3_lo, e3_hi, e1_parity, e2_parity, e3_parity,
    p1_mode, p1_calendar, p1_model_relative, p1_parity,
    rec_pre_year, rec_pre_n, rec_post_year, rec_post_n,
    lap_pre, lap_post, empirical_cutoff, lap_at_chance, recall_hit_rate, recall_p_value,
    delta, delta_t, delta_gate, delta_rank_deficient, valid_sketch_rate, cells,
    robustness.model_key is not null as robustness_checked, robustness.failed_checks
from {{ ref('agg_hb_audit_rows') }} as audit_rows
left join {{ ref('agg_hb_robustness') }} as robustness on robustness.model_key = audit_rows.model_key
order by audit_rows.e2_est desc nulls last, audit_rows.model_key
