-- Assert that agg_tts_quality accounts for every record of every current TTS file exactly once,
-- per cohort and source, and that each loaded or rejected file's records all reached raw.
with raw_counts as (
    select cohort, source, count(*) as n_raw
    from {{ ref('stg_raw__tts_records') }}
    where is_current
    group by cohort, source
),

mart_counts as (
    select cohort, source, sum(n_lines) as n_mart
    from {{ ref('agg_tts_quality') }}
    group by cohort, source
),

count_mismatch as (
    select
        coalesce(raw_counts.cohort, mart_counts.cohort) as cohort,
        coalesce(raw_counts.source, mart_counts.source) as source,
        'raw ' || coalesce(raw_counts.n_raw, 0) || ' vs mart ' || coalesce(mart_counts.n_mart, 0) as problem
    from raw_counts
    full outer join mart_counts
        on mart_counts.cohort = raw_counts.cohort
        and mart_counts.source = raw_counts.source
    where coalesce(raw_counts.n_raw, 0) <> coalesce(mart_counts.n_mart, 0)
),

file_records as (
    select source_file, load_id, count(*) as n_records
    from {{ source('raw', 'tts_records') }}
    group by source_file, load_id
),

file_mismatch as (
    select
        loads.cohort,
        loads.source,
        loads.source_file || ': loaded ' || coalesce(file_records.n_records, 0)
            || ' of ' || loads.n_records || ' records' as problem
    from {{ ref('stg_raw__loads') }} as loads
    left join file_records
        on file_records.source_file = loads.source_file
        and file_records.load_id = loads.load_id
    where loads.kind = 'tts'
      and loads.file_status in ('loaded', 'rejected')
      and coalesce(file_records.n_records, 0) <> loads.n_records
)

select * from count_mismatch
union all
select * from file_mismatch
