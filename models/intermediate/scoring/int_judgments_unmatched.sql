-- The loaded judgments the build cannot use yet, with the reason and the line they came from
-- (`hindsight status` lists them; the warn test warn_loaded_judgments_matched says so in a build).
with matched as (
    select * from {{ ref('int_loaded_judgments_matched') }}
),

final as (
    select
        judgment_id,
        match_status as reason,
        kind,
        question_id,
        model,
        condition,
        visibility,
        prompt_variant,
        sample_index,
        judge_model,
        source_file,
        line_number,
        loaded_at
    from matched
    where match_status <> 'matched'
)

select * from final
