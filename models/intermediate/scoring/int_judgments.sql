-- The judgments the scores use: the judge runner's (stg_raw__judgments) and the loaded ones the
-- build matched to their answers, the newest per judged answer (or answer pair) and judge model, each
-- with the judge's reply as it came (the runner's raw output, or the loaded line whole).
with judgments as (
    select *, 'runner' as judgment_source from {{ ref('stg_raw__judgments') }}
    union all
    -- the matched loaded judgments in the runner's shape (its columns in its order): their answers
    -- named by id
    select
        judgment_id,
        kind,
        response_id,
        full_response_id,
        masked_response_id,
        judge_model,
        {{ judgment_score_columns() }},
        loaded_at as judged_at,
        record_text as raw_output,
        'loaded' as judgment_source
    from {{ ref('int_loaded_judgments_matched') }}
    where match_status = 'matched'
),

ranked as (
    select
        *,
        row_number() over (
            partition by kind, coalesce(response_id, full_response_id || '|' || masked_response_id), judge_model
            order by judged_at desc, judgment_id desc
        ) as version_rank
    from judgments
),

final as (
    select {{ star_except(['version_rank']) }}
    from ranked
    where version_rank = 1
)

select * from final
