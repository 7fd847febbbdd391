-- One row per question-level metric value that enters a mean: Acc and HTR of
-- each cell's newest answer (visibility full | masked) and dAcc, dHTR, AIR,
-- HBR of each pair (visibility paired). NULL values (metric not defined for
-- the question's eval_target, unjudged free response) do not enter.
with answers as (
    select * from {{ ref('int_answers_scored') }}
    where is_latest_in_cell
),

pairs as (
    select * from {{ ref('int_answer_pairs_scored') }}
),

answer_values as (
    select
        cohort, case_id, question_id, model, condition, prompt_variant, format, options_type,
        metric, visibility, value, parse_status <> 'invalid' as is_valid
    from answers
    cross join lateral (values ('acc', acc), ('htr', htr)) as metrics (metric, value)
),

pair_values as (
    select
        cohort, case_id, question_id, model, condition, prompt_variant, format, options_type,
        metric, 'paired' as visibility, value, both_valid as is_valid
    from pairs
    cross join lateral (
        values ('delta_acc', delta_acc), ('delta_htr', delta_htr), ('air', air), ('hbr', hbr)
    ) as metrics (metric, value)
),

final as (
    select * from answer_values where value is not null
    union all
    select * from pair_values where value is not null
)

select * from final
