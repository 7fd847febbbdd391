-- One row per file a load command looked at, with what became of it.
with source as (
    select * from {{ source('raw', 'loads') }}
),

final as (
    select
        load_id,
        kind,
        cohort,
        source,
        case_id,
        source_file,
        file_sha256,
        status as file_status,
        reason,
        n_records,
        loaded_at
    from source
)

select * from final
