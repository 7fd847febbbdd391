-- The latest synthetic narrative per (narrative request, generating model).
with source as (
    select * from {{ source('raw', 'synthetic_narratives') }}
),

ranked as (
    select
        narrative_request_id,
        model as narrative_model,
        narrative_text,
        generated_at,
        row_number() over (partition by narrative_request_id, model order by generated_at desc) as version_rank
    from source
),

final as (
    select narrative_request_id, narrative_model, narrative_text, generated_at
    from ranked
    where version_rank = 1
)

select * from final
