-- Report, human validation: Table G.1 of every validation design (paper Appendix G), each cohort
-- and all, the estimate with its case-clustered bootstrap interval.
select
    design_id,
    cohort,
    item,
    coalesce(judge_model, '') as judge_model,
    statistic,
    estimate,
    ci_low,
    ci_high,
    n_questions,
    n_cases,
    n_assessments
from {{ ref('agg_validation') }}
order by design_id, cohort = 'all' desc, cohort, item, judge_model, statistic
