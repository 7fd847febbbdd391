-- One row per annotator's assessment of a question of a validation design (its newest version):
-- reasonable, agree_reference and agree_trap as yes, no or na (NULL while unanswered), with the
-- case's half and inclusion probability.
with annotations as (
    select * from {{ ref('stg_raw__annotations') }}
),

cases as (
    select design_id, cohort, case_id, half, inclusion_probability from {{ ref('stg_raw__validation_cases') }}
),

final as (
    select
        annotations.design_id,
        annotations.cohort,
        annotations.case_id,
        annotations.question_id,
        annotations.annotator,
        cast(cases.half as integer) as half,
        cast(annotations.rater as integer) as rater,
        annotations.reasonable,
        annotations.agree_reference,
        annotations.agree_trap,
        annotations.comment,
        cast(cases.inclusion_probability as double) as inclusion_probability,
        annotations.source_file,
        cast(annotations.line_number as integer) as line_number
    from annotations
    inner join cases using (design_id, cohort, case_id)
)

select * from final
