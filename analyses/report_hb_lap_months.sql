-- Report, HindsightBench Figure 3: monthly LAP (mean over the month's probed dates) per model, with the
-- model's effective cutoff and whether its recall is at chance (cutoff undefined).
with lap as (
    select model_key, decision_month, avg(lap) as lap, sum(n_lines) as n_lines
    from {{ ref('agg_hb_lap_series') }}
    group by all
),

audit as (
    select model_key, coalesce(display, model_key) as display, empirical_cutoff, lap_at_chance
    from {{ ref('agg_hb_audit_rows') }}
)

select lap.model_key, audit.display, lap.decision_month, lap.lap, lap.n_lines,
    audit.empirical_cutoff, coalesce(audit.lap_at_chance, false) as lap_at_chance
from lap
left join audit on audit.model_key = lap.model_key
order by audit.empirical_cutoff nulls first, lap.model_key, lap.decision_month
