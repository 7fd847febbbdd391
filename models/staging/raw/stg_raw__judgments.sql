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
        accuracy_score,
        htr_score,
        full_equals_masked,
        full_accuracy_score,
        masked_accuracy_score,
        full_htr_score,
        masked_htr_score,
        hbr_score,
        judged_at
    from source
)

select * from final
