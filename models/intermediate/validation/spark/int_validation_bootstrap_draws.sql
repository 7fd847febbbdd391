-- The bootstrap draws of the validation table (the warehouse's counter-based draws, one stream per
-- row and cohort), for the SQL twin of int_validation_agreement.py (macros/validation_agreement_sql.sql).
{{ config(materialized='table') }}
{{ validation_bootstrap_draws_sql() }}
