"""Stage 3: the estimators the dbt Python models call (case-clustered bootstrap, metric
estimates, the HindsightBench audit statistics). Pure functions of relations and arrays."""
