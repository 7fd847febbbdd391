-- One row per cohort x model x condition x prompt_variant x metric x
-- visibility x eval_target: agg_metrics sliced by what each question was
-- written to measure (paper §3.3). Same estimator and the same draws.
{{ select_metric_estimates('eval_target', ['eval_target'], 'int_metric_estimates_by_eval_target') }}
