-- The SQL twin of int_validation_agreement.py on engines without dbt Python models (Spark): Table
-- G.1 from the warehouse's counter-based draws (macros/validation_agreement_sql.sql).
{{ config(materialized='table') }}
{{ validation_agreement_sql() }}
