-- Report, data quality: paired-condition questions without both a full and a masked answer, for every
-- cohort x model x prompt_variant that answered anything and every condition requested for it (a pair
-- needs both answers to enter the paired metrics). The build counts them (agg_pair_coverage).
select cohort, model, prompt_variant, condition, n_expected, n_paired, n_missing_full, n_missing_masked
from {{ ref('agg_pair_coverage') }}
where n_expected > 0
order by cohort, model, prompt_variant, condition
