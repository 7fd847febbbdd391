-- One row per free-response judgment: the latest per judged answer (or
-- answer pair) and judge model. Scores are in {0, 0.5, 1}.
with source as (
    select * from {{ source('raw', 'judgments') }}
),

ranked as (
    select
        *,
        row_number() over (
            partition by kind, coalesce(response_id, full_response_id || '|' || masked_response_id), judge_model
            order by judged_at desc, judgment_id desc
        ) as version_rank
    from source
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
    from ranked
    where version_rank = 1
)

select * from final
