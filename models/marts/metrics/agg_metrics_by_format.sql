-- One row per cohort x model x condition x prompt_variant x metric x
-- visibility x format x options_type: agg_metrics sliced by question format,
-- for BI tools. Same estimator and the same bootstrap draws.
{{ select_metric_estimates('format', ['format', 'options_type']) }}
