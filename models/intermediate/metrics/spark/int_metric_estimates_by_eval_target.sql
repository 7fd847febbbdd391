-- int_metric_estimates_by_eval_target.py on Spark: grouping `eval_target`, by the same estimator on
-- the executors (macros/metric_estimates_spark.sql).
{{ config(**fact_config(['cohort', 'model', 'condition', 'prompt_variant', 'visibility'])) }}
{{ metric_estimates_spark('eval_target', ['eval_target']) }}
