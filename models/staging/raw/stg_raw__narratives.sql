-- The latest loaded version of each case's narrative.
with source as (
    select * from {{ source('raw', 'narratives') }}
),

ranked as (
    select
        cohort,
        case_id,
        narrative_text,
        encoding as narrative_encoding,
        source_file,
        load_id,
        loaded_at,
        row_number() over (partition by cohort, case_id order by load_id desc) as version_rank
    from source
),

final as (
    select cohort, case_id, narrative_text, narrative_encoding, source_file, load_id, loaded_at
    from ranked
    where version_rank = 1
)

select * from final
