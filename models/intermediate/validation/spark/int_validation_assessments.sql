-- The assessments of the validation table, each in the row of its cohort and of `all`, for the SQL
-- twin of int_validation_agreement.py (macros/validation_agreement_sql.sql).
{{ validation_assessments_sql() }}
