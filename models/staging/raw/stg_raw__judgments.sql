-- One row per judgment the judge runner wrote (and judgments loaded by earlier versions, which named
-- their answers by response id); int_judgments adds the loaded ones and keeps the newest per target.
with source as (
    select * from {{ source('raw', 'judgments') }}
),

final as (
    select
        judgment_id,
        kind,
        response_id,
        full_response_id,
        masked_response_id,
        judge_model,
        {{ judgment_score_columns() }},
        judged_at,
        -- the judge's reply as it came back: its reasons beside the scores (fct_judgments)
        raw_output
    from source
)

select * from final
