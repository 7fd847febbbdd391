-- int_metric_estimates.py on Spark, where dbt runs no Python model: the same rows at groupings
-- `format` and `overall`, by the same estimator on the executors (macros/metric_estimates_spark.sql).
{{ config(**fact_config(['cohort', 'model', 'condition', 'prompt_variant', 'visibility'])) }}
{{ metric_estimates_spark('format', ['format', 'options_type'],
                          {'overall': ['model', 'condition', 'prompt_variant', 'metric', 'visibility']}) }}
