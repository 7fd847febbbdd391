-- Report, data quality: quarantined TTS lines per cohort, source and reason.
select cohort, source, reason, sum(n_lines) as n_lines, sum(n_files) as n_files
from {{ ref('agg_tts_quality') }}
where status <> 'valid'
group by all
order by cohort, source, n_lines desc
