-- Report, Figure D.1: relative cutoff position RelPos(q) of every question where it is defined.
select cohort, question_id, relpos
from {{ ref('dim_questions') }}
where relpos is not null
order by cohort, relpos
