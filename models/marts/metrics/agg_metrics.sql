-- One row per cohort x model x condition x prompt_variant x metric x
-- visibility: the paper's metrics (Acc, HTR per visibility; dAcc, dHTR, AIR,
-- HBR paired) with case-clustered bootstrap 95% CIs, Miller's clustered
-- standard error and, for paired metrics, the minimum detectable effect.
{{ select_metric_estimates('overall') }}
