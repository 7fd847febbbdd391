-- One row per stored answer (replayed or from a runner): the answer as given,
-- its normalised form and parse status under a versioned parser, and its Acc
-- and HTR (NULL where the question's eval_target defines none, or a free
-- response is not judged yet). Parse failures are kept.
with answers as (
    select * from {{ ref('int_answers_scored') }}
),

final as (
    select
        response_id,
        cohort,
        case_id,
        question_id,
        model,
        provider,
        base_url_host,
        reported_model,
        condition,
        visibility,
        prompt_variant,
        cast(sample_index as integer) as sample_index,
        format,
        options_type,
        eval_target,
        answer,
        response_parse_status,
        finish_reason,
        answer_normalised,
        parse_status,
        parser_version,
        cast(acc as double) as acc,
        cast(htr as double) as htr,
        judge_model,
        is_latest_in_cell,
        evidence,
        call_id,
        source_file,
        cast(line_number as integer) as line_number,
        cast(load_id as integer) as load_id
    from answers
)

select * from final
