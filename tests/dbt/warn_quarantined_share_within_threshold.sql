{{ config(severity='warn') }}
-- Data quality on user data (warns, never fails): the share of quarantined or rejected TTS records
-- per cohort and source stays within var('max_quarantined_record_share').
with quality as (
    select
        cohort,
        source,
        sum(n_lines) filter (where status <> 'valid') as n_bad,
        sum(n_lines) as n_all
    from {{ ref('agg_tts_quality') }}
    group by cohort, source
)

select cohort, source, n_bad, n_all, n_bad / n_all as share
from quality
where n_bad / n_all > {{ var('max_quarantined_record_share') }}
