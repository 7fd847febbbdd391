-- Assert that RelPos is NULL exactly when a reason says why, and that k never exceeds n.
select question_id, relpos, relpos_undefined_reason, n_reference_events, n_reference_events_at_cutoff
from {{ ref('dim_questions') }}
where (relpos is null) <> (relpos_undefined_reason is not null)
   or n_reference_events_at_cutoff > n_reference_events
