-- One row per judgment line loaded from a file: the answers it judges named as responses name them
-- (matched to answers by int_loaded_judgments_matched). Scores are in {0, 0.5, 1}.
with source as (
    select * from {{ source('raw', 'loaded_judgments') }}
),

final as (
    select
        judgment_id,
        kind,
        question_id,
        model,
        condition,
        visibility,
        prompt_variant,
        sample_index,
        judge_model,
        {{ judgment_score_columns() }},
        source_file,
        line_number,
        load_id,
        loaded_at,
        -- the line as loaded, a rationale and other fields kept (fct_judgments)
        cast(record as {{ dbt.type_string() }}) as record_text
    from source
)

select * from final
