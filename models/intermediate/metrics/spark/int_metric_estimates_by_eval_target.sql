-- The SQL twin of int_metric_estimates_by_eval_target.py on engines without dbt Python models
-- (Spark): grouping `eval_target` (macros/metric_estimates_sql.sql).
{{ config(**fact_config(['cohort', 'model', 'condition', 'prompt_variant', 'visibility'])) }}
{{ metric_estimates_sql('eval_target', ['eval_target']) }}
