-- The newest version of each annotator's assessment of each question of a validation design
-- (a changed packet row is loaded as a new version), with the annotator's position in its half
-- (rater 1 or 2, the order of the design's annotator list).
with annotations as (
    select * from {{ source('raw', 'annotations') }}
),

assignments as (
    select * from {{ source('raw', 'validation_assignments') }}
),

designs as (
    select design_id, annotators from {{ source('raw', 'validation_designs') }}
),

ranked as (
    select
        *,
        row_number() over (
            partition by design_id, annotator, question_id order by load_id desc, line_number desc
        ) as version_rank
    from annotations
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
        newest.annotator,
        -- the first two annotators assess half 1, the last two half 2; rater 1 is the first of a pair
        case when {{ json_list_position('designs.annotators', 'newest.annotator') }} % 2 = 1 then 1 else 2 end
            as rater,
        newest.reasonable,
        newest.agree_reference,
        newest.agree_trap,
        newest.comment,
        newest.source_file,
        newest.line_number,
        newest.load_id,
        newest.loaded_at
    from newest
    inner join designs using (design_id)
    inner join assignments
        on assignments.design_id = newest.design_id
        and assignments.annotator = newest.annotator
        and assignments.case_id = newest.case_id
)

select * from final
