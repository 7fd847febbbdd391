{{ config(severity='warn') }}
-- Loaded judgments wait for what they judge (warns, never fails: load it and build again): every
-- judgment loaded with `hindsight load judgments` is matched to its question and answers.
select
    reason,
    source_file,
    line_number,
    question_id,
    model,
    condition
from {{ ref('int_judgments_unmatched') }}
