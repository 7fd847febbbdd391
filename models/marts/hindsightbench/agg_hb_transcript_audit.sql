-- One row per audited model x arm (W, M): how many whole replies mention a year of the crises or of
-- after the panel, an event of the 7- and the 18-term lexicons, a "Month YYYY", and in W the asserted
-- fake year, the true year (over replies whose true year differs) and an anachronism, each also as a
-- rate of its own denominator (int_hb_transcript_audit; patterns in seed hb_transcript_patterns).
with audit as (
    select * from {{ ref('int_hb_transcript_audit') }}
),

registry as (
    select model_key, row_version from {{ ref('stg_raw__hb_registry') }}
),

final as (
    select
        audit.model_key,
        registry.row_version,
        audit.arm,
        audit.n_files,
        audit.n_dates,
        audit.n_replicates,
        audit.year_hits,
        cast(audit.year_hits as double) / nullif(audit.n_files, 0) as year_rate,
        audit.event7_hits,
        cast(audit.event7_hits as double) / nullif(audit.n_files, 0) as event7_rate,
        audit.event18_hits,
        cast(audit.event18_hits as double) / nullif(audit.n_files, 0) as event18_rate,
        audit.monthyear_hits,
        cast(audit.monthyear_hits as double) / nullif(audit.n_files, 0) as monthyear_rate,
        audit.fake_year_hits,
        audit.fake_year_files,
        cast(audit.fake_year_hits as double) / nullif(audit.fake_year_files, 0) as fake_year_rate,
        audit.true_year_hits,
        audit.true_year_files,
        cast(audit.true_year_hits as double) / nullif(audit.true_year_files, 0) as true_year_rate,
        audit.anachronism_hits,
        cast(audit.anachronism_hits as double) / nullif(audit.fake_year_files, 0) as anachronism_rate
    from audit
    left join registry on registry.model_key = audit.model_key
)

select * from final
