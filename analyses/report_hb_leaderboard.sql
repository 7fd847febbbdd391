-- Report, HindsightBench leaderboard: the per-model audit rows with their CIs and gates.
select
    model_key, coalesce(display, model_key) as display, generation,
    e1_est, e1_lo, e1_hi, e2_est, e2_lo, e2_hi, e3_est, e3_lo, e3_hi, e1_parity, e2_parity, e3_parity,
    p1_mode, p1_calendar, p1_model_relative, p1_parity,
    rec_pre_year, rec_pre_n, rec_post_year, rec_post_n,
    lap_pre, lap_post, empirical_cutoff, lap_at_chance, recall_hit_rate, recall_p_value,
    delta, delta_t, delta_gate, delta_rank_deficient, valid_sketch_rate, cells
from {{ ref('agg_hb_audit_rows') }}
order by e2_est desc nulls last, model_key
