-- One row per replayed model answer, as loaded (model name verbatim).
with source as (
    select * from {{ source('raw', 'responses') }}
),

final as (
    select
        response_id,
        question_id,
        model,
        condition,
        visibility,
        prompt_variant,
        answer,
        evidence,
        source_file,
        line_number,
        load_id,
        loaded_at
    from source
)

select * from final
