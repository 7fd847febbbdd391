-- Report, human validation: each design's draw per cohort (paper Appendix G): cases, cases drawn
-- per half, EPS and inclusion-probability ranges of the drawn and the other cases.
select
    design_id,
    model,
    cohort,
    count(*) as n_cases,
    count(*) filter (where sampled) as n_drawn,
    count(*) filter (where half = 1) as n_half_1,
    count(*) filter (where half = 2) as n_half_2,
    round(avg(eps) filter (where sampled), 3) as mean_eps_drawn,
    round(avg(eps) filter (where not sampled), 3) as mean_eps_other,
    round(min(inclusion_probability), 3) as min_inclusion_probability,
    round(max(inclusion_probability), 3) as max_inclusion_probability,
    round(max(inclusion_probability_se), 4) as max_monte_carlo_se
from {{ ref('fct_validation_cases') }}
group by design_id, model, cohort
order by design_id, cohort
