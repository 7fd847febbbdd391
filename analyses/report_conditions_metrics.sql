-- Report, overview: the input conditions and the metrics in the paper's terms.
select
    'condition' as kind, condition as code, label,
    case when is_strict_masking then 'strict masking (starred)' when is_paired then 'paired' else 'unpaired' end as note
from {{ ref('dim_conditions') }}
union all
select 'metric' as kind, metric as code, label, definition || ' (positive: ' || positive_means || ')' as note
from {{ ref('dim_metrics') }}
order by kind, code
