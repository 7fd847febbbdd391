-- One row per judgment a score uses: the individual judgment of an answer (int_answers_scored's
-- judgment_id) and the paired judgment of a full/masked pair (int_answer_pairs' paired_judgment_id),
-- with the judge's reply as it came back (the runner's raw output, or the loaded line whole), so a
-- reader sees the reasons behind a free response's scores, not only the scores. Named by the judged
-- answer's model and question, and published a file per model as the answers are: the pair view's
-- lookup reads one model's judgments (a scan of 5 M judgments in one file costs 0.2 s).
{{ config(materialized='view') }}
with judgments as (
    select * from {{ ref('int_judgments') }}
),

used as (
    -- each judgment with the answer (or pair) whose score it gives
    select judgment_id, model, question_id, condition, prompt_variant
    from {{ ref('int_answers_scored') }}
    where judgment_id is not null
    union all
    select paired_judgment_id as judgment_id, model, question_id, condition, prompt_variant
    from {{ ref('int_answer_pairs') }}
    where paired_judgment_id is not null
),

final as (
    select
        judgments.judgment_id,
        judgments.kind,
        used.model,
        used.question_id,
        used.condition,
        used.prompt_variant,
        judgments.response_id,
        judgments.full_response_id,
        judgments.masked_response_id,
        judgments.judge_model,
        {{ judgment_score_columns() }},
        judgments.judgment_source,
        judgments.raw_output as judge_output,
        judgments.judged_at
    from judgments
    inner join used on used.judgment_id = judgments.judgment_id
)

select * from final
