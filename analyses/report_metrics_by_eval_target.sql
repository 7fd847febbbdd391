-- Report, per-eval-target breakdown: metrics per question evaluation target (accuracy, hindsight_bias, both).
select
    cohort, model, condition, prompt_variant, metric, visibility,
    eval_target as slice,
    estimate, ci_low, ci_high, significant, few_cases, n_questions, n_cases
from {{ ref('agg_metrics_by_eval_target') }}
where prompt_variant = 'standard'
order by cohort, model, metric, slice, condition
