-- One row per stored answer, scored against its question (paper §3.7.1).
-- Acc for accuracy/both questions: exact match of normalised answers, or the
-- judge's score for free response. HTR for hindsight_bias/both questions:
-- 1[answer = trap] for true/false and categorical; for ordinal, movement
-- from the reference toward the trap, clamp((pos(a) - pos(ref)) /
-- (pos(trap) - pos(ref)), 0, 1); the judge's score for free response. An
-- invalid answer scores 0 on both. The newest answer of a cell (question x
-- model x condition x visibility x prompt_variant) is the one metrics use.
with responses as (
    select * from {{ ref('stg_raw__responses') }}
),

questions as (
    select question_id, cohort, case_id, format, options_type, eval_target
    from {{ ref('int_questions_positioned') }}
),

texts as (
    select * from {{ ref('int_answer_texts_normalised') }}
),

judgments as (
    select response_id, judge_model, accuracy_score, htr_score,
        row_number() over (partition by response_id order by judged_at desc, judge_model) as judge_rank
    from {{ ref('stg_raw__judgments') }}
    where kind = 'individual'
),

joined as (
    select
        responses.response_id,
        questions.cohort,
        questions.case_id,
        responses.question_id,
        responses.model,
        responses.condition,
        responses.visibility,
        responses.prompt_variant,
        responses.sample_index,
        questions.format,
        questions.options_type,
        questions.eval_target,
        responses.answer,
        responses.evidence,
        responses.provider,
        responses.base_url_host,
        responses.reported_model,
        responses.call_id,
        responses.response_parse_status,
        responses.finish_reason,
        answer_text.normalised as answer_normalised,
        case when responses.response_parse_status = 'truncated' then 'truncated' else answer_text.parse_status end
            as parse_status,
        answer_text.parser_version,
        answer_text.option_position as answer_position,
        reference.normalised as reference_normalised,
        reference.option_position as reference_position,
        trap.normalised as trap_normalised,
        trap.option_position as trap_position,
        judgments.judge_model,
        judgments.accuracy_score as judge_accuracy_score,
        judgments.htr_score as judge_htr_score,
        responses.source_file,
        responses.line_number,
        responses.load_id
    from responses
    inner join questions on questions.question_id = responses.question_id
    inner join texts as answer_text
        on answer_text.text_kind = 'response' and answer_text.text_key = responses.response_id
    left join texts as reference
        on reference.text_kind = 'reference' and reference.text_key = responses.question_id
    left join texts as trap
        on trap.text_kind = 'trap' and trap.text_key = responses.question_id
    left join judgments
        on judgments.response_id = responses.response_id and judgments.judge_rank = 1
),

scored as (
    select
        *,
        case
            when eval_target not in ('accuracy', 'both') then null
            when parse_status = 'truncated' then 0.0
            when format = 'free response' then judge_accuracy_score
            when parse_status <> 'valid' then 0.0
            when answer_normalised = reference_normalised then 1.0
            else 0.0
        end as acc,
        case
            when eval_target not in ('hindsight_bias', 'both') then null
            when parse_status = 'truncated' then 0.0
            when format = 'free response' then judge_htr_score
            when parse_status <> 'valid' then 0.0
            when options_type = 'ordinal' and trap_position <> reference_position
                then greatest(0.0, least(1.0,
                    cast(answer_position - reference_position as double) / (trap_position - reference_position)))
            when answer_normalised = trap_normalised then 1.0
            else 0.0
        end as htr,
        -- AIR compares valid answers by their normalised form, invalid ones by
        -- their trimmed, case-folded text
        case
            when parse_status = 'valid' then 'valid:' || answer_normalised
            else 'raw:' || lower(trim(coalesce(answer, '')))
        end as comparison_key,
        row_number() over (
            partition by question_id, model, condition, visibility, prompt_variant, sample_index
            order by parse_status = 'truncated', load_id desc, line_number desc
        ) = 1 as is_latest_in_cell
    from joined
)

select * from scored
