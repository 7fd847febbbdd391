-- Report, HindsightBench leaderboard: the per-model audit rows with their CIs, gates and the
-- robustness checks they fail (agg_hb_robustness).
select
    audit_rows.model_key, coalesce(audit_rows.display, audit_rows.model_key) as display, audit_rows.generation,
    audit_rows.e1_est, audit_rows.e1_lo, audit_rows.e1_hi, audit_rows.e2_est, audit_rows.e2_lo, audit_rows.e2_hi,
    audit_rows.e3_est, audit_rows.e3_lo, audit_rows.e3_hi, audit_rows.e1_parity, audit_rows.e2_parity, audit_rows.e3_parity,
    audit_rows.p1_mode, audit_rows.p1_calendar, audit_rows.p1_model_relative, audit_rows.p1_parity,
    audit_rows.rec_pre_year, audit_rows.rec_pre_n, audit_rows.rec_post_year, audit_rows.rec_post_n,
    audit_rows.lap_pre, audit_rows.lap_post, audit_rows.empirical_cutoff, audit_rows.lap_at_chance,
    audit_rows.recall_hit_rate, audit_rows.recall_p_value, audit_rows.delta, audit_rows.delta_t, audit_rows.delta_gate,
    audit_rows.delta_rank_deficient, audit_rows.valid_sketch_rate, audit_rows.cells,
    robustness.model_key is not null as robustness_checked, robustness.failed_checks
from {{ ref('agg_hb_audit_rows') }} as audit_rows
left join {{ ref('agg_hb_robustness') }} as robustness on robustness.model_key = audit_rows.model_key
order by audit_rows.e2_est desc nulls last, audit_rows.model_key
