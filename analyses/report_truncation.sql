-- Replies that ended on the token limit, per cohort x model x condition (both visibilities):
-- stored, truncated, and still truncated among the answers the metrics use.
with completion as (
    select * from {{ ref('agg_answer_completion') }}
),

final as (
    select
        cohort,
        model,
        condition,
        sum(n_answers) as n_answers,
        sum(n_truncated) as n_truncated,
        round(sum(n_truncated) / sum(n_answers), 4) as truncation_rate,
        sum(n_truncated_in_use) as n_truncated_in_use
    from completion
    group by cohort, model, condition
    order by cohort, model, condition
)

select * from final
