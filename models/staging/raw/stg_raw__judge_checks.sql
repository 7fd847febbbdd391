-- The newest version of each annotator's check of each judged free-response answer: the judge's
-- scores as the packet showed them and the annotator's own.
with checks as (
    select * from {{ source('raw', 'judge_checks') }}
),

designs as (
    select design_id, annotators from {{ source('raw', 'validation_designs') }}
),

ranked as (
    select
        *,
        row_number() over (
            partition by design_id, annotator, response_id order by load_id desc, line_number desc
        ) as version_rank
    from checks
),

newest as (
    select * from ranked where version_rank = 1
),

final as (
    select
        newest.design_id,
        newest.cohort,
        newest.case_id,
        newest.question_id,
        newest.response_id,
        newest.judge_model,
        newest.annotator,
        case when {{ json_list_position('designs.annotators', 'newest.annotator') }} % 2 = 1 then 1 else 2 end
            as rater,
        newest.judge_accuracy_score,
        newest.judge_htr_score,
        newest.human_accuracy_score,
        newest.human_htr_score,
        newest.comment,
        newest.load_id
    from newest
    inner join designs using (design_id)
)

select * from final
