-- Report, Table D.1: distribution of RelPos(q) per cohort.
select cohort, n, n_undefined, mean, median, sd, min, max
from {{ ref('agg_relpos') }}
order by cohort
