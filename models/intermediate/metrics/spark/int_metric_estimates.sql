-- The SQL twin of int_metric_estimates.py on engines without dbt Python models (Spark): the same
-- rows at groupings `format` and `overall` from the same case sums and bootstrap draws
-- (macros/metric_estimates_sql.sql).
{{ config(**fact_config(['cohort', 'model', 'condition', 'prompt_variant', 'visibility'])) }}
{{ metric_estimates_sql('format', ['format', 'options_type'],
                        {'overall': ['model', 'condition', 'prompt_variant', 'metric', 'visibility']}) }}
