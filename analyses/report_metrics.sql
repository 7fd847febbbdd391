-- Report, Figures 3 and 4, E.7-E.9 and Appendix F: every metric cell of agg_metrics with its 95% CI.
select
    cohort, model, condition, prompt_variant, metric, visibility,
    estimate, ci_low, ci_high, significant, few_cases, n_questions, n_cases
from {{ ref('agg_metrics') }}
order by cohort, model, prompt_variant, metric, visibility, condition
