-- Report, per-format breakdown: paired metrics per question format (multiple choice split by options type).
select
    cohort, model, condition, prompt_variant, metric, visibility,
    case when options_type is null then format else format || ' (' || options_type || ')' end as slice,
    estimate, ci_low, ci_high, significant, few_cases, n_questions, n_cases
from {{ ref('agg_metrics_by_format') }}
where prompt_variant = 'standard'
order by cohort, model, metric, slice, condition
