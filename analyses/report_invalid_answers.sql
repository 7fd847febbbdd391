-- Report, data quality: answers that did not parse, per cohort, model and question format (newest answer per cell).
select
    cohort, model, format,
    count(*) as n_answers,
    count(*) filter (where parse_status = 'invalid') as n_invalid,
    count(*) filter (where parse_status = 'invalid') / count(*) as invalid_share
from {{ ref('fct_answers') }}
where is_latest_in_cell
group by all
order by cohort, model, format
