-- One row per stored answer, scored against its question (paper §3.7.1).
-- Acc for accuracy/both questions: exact match of normalised answers, or the
-- judge's score for free response. HTR for hindsight_bias/both questions:
-- 1[answer = trap] for true/false and categorical; for ordinal, movement
-- from the reference toward the trap, clamp((pos(a) - pos(ref)) /
-- (pos(trap) - pos(ref)), 0, 1); the judge's score for free response. An
-- invalid answer scores 0 on both.
--
-- The newest answer of a cell (question x model x condition x visibility x prompt_variant x
-- sample; a complete reply before a truncated one) is the one metrics use (is_latest_in_cell).
-- Narrow: the question's labels and the answer's text and provenance are joined in by fct_answers.
--
-- Incremental: a score depends only on its answer, its question, its judgment and the scoring
-- code, so a build scores only answers of new loads, answers whose judgment changed, answers of
-- reloaded questions, and every answer when the scoring code (this model, the text normaliser, the
-- option parser) or the parser version changed since it was scored (scoring_fingerprint); the
-- cells of those answers decide their newest answer again.
-- `hindsight build --full-refresh` rebuilds from scratch; tests/python/test_refresh.py checks that
-- both give the same marts. On Spark the same reasons pick whole models (the table's partitions):
-- a model with answers of a new load, a judgment changed or an answer to a reloaded question is
-- scored again, and every model when the scoring code changed (tests/python/test_spark_engine.py).
-- Which answers a build scores: macro answers_to_score. The incremental pattern (stored marks and
-- fingerprint, changed keys, the same SQL over them, replaced whole):
-- docs/architecture.md#the-incremental-pattern.
{{ config(**fact_config('response_key')) }}
{#- what scores an answer: this model, the text normaliser, the option parser, the parser version, the judgment chosen #}
{%- set fingerprint = code_fingerprint(['int_answer_texts_normalised', 'int_question_options'],
                                       answer_parser_version() ~ newest_individual_judgments('int_judgments')) %}
{%- set to_score = answers_to_score(fingerprint) if is_incremental() else none %}
with judgments as (
    {{ newest_individual_judgments(ref('int_judgments')) }}
),

responses as (
    select * from {{ ref('stg_raw__responses') }}
    {%- if to_score %}
    where {{ to_score }}
    {%- endif %}
),

texts as (
    select * from {{ ref('int_answer_texts_normalised') }}
),

questions as (
    -- the reference answer and the trap normalised once per question, not once per answer
    select
        questions.question_id,
        questions.cohort,
        questions.case_id,
        questions.format,
        questions.options_type,
        questions.eval_target,
        questions.load_id as question_load_id,
        reference.normalised as reference_normalised,
        reference.option_position as reference_position,
        trap.normalised as trap_normalised,
        trap.option_position as trap_position
    from {{ ref('int_questions_positioned') }} as questions
    left join texts as reference
        on reference.question_id = questions.question_id and reference.text = coalesce(questions.correct_answer, '')
    left join texts as trap
        on trap.question_id = questions.question_id and trap.text = questions.hindsight_trap
),

joined as (
    select
        responses.response_id,
        responses.response_key,
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
        answer_text.normalised as answer_normalised,
        case
            when responses.response_parse_status = 'truncated' then 'truncated'
            -- a runner's reply that was not the asked-for JSON has no answer to judge; replies read by
            -- answer-json-1 keep what that version made of them (their whole text went to the judge)
            when responses.response_parse_status in ('not_json', 'missing_answer') and questions.format = 'free response'
                and responses.response_parser_version <> 'answer-json-1'
                then 'invalid'
            else answer_text.parse_status
        end as parse_status,
        answer_text.parser_version,
        answer_text.option_position as answer_position,
        questions.reference_normalised,
        questions.reference_position,
        questions.trap_normalised,
        questions.trap_position,
        judgments.judgment_id,
        judgments.judge_model,
        judgments.accuracy_score as judge_accuracy_score,
        judgments.htr_score as judge_htr_score,
        responses.load_id,
        questions.question_load_id
    from responses
    inner join questions on questions.question_id = responses.question_id
    inner join texts as answer_text
        on answer_text.question_id = responses.question_id and answer_text.text = coalesce(responses.answer, '')
    left join judgments on judgments.response_id = responses.response_id
),

scored as (
    select
        *,
        case
            when eval_target not in ('accuracy', 'both') then null
            when parse_status in ('truncated', 'invalid') then 0.0
            when format = 'free response' then judge_accuracy_score
            when parse_status <> 'valid' then 0.0
            when answer_normalised = reference_normalised then 1.0
            else 0.0
        end as acc,
        case
            when eval_target not in ('hindsight_bias', 'both') then null
            when parse_status in ('truncated', 'invalid') then 0.0
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
        {{ hash64("case
            when parse_status = 'valid' then 'valid:' || answer_normalised
            else 'raw:' || lower(trim(coalesce(answer, '')))
        end") }} as comparison_hash,
        '{{ fingerprint }}' as scoring_fingerprint,
        cast(now() as timestamp) as scored_at
    from joined
),

newly_scored as (
    -- what scoring decides, the cell's keys and the raw row's key: at 100x the paper's cases 17.8 M
    -- rows are written, and each wide column costs seconds (fct_answers joins the rest, the response
    -- id too: its md5 text alone took a third of the write)
    select
        response_key,
        question_id,
        model,
        condition,
        visibility,
        prompt_variant,
        sample_index,
        answer_normalised,
        parse_status,
        parser_version,
        acc,
        htr,
        comparison_hash,
        judgment_id,
        judge_model,
        load_id,
        question_load_id,
        scoring_fingerprint,
        scored_at
    from scored
),

{%- if is_incremental() and target.type != 'spark' %}

touched as (
    select distinct question_id, model, condition, visibility, prompt_variant, sample_index
    from newly_scored
),

cell_answers as (
    -- every answer of a cell with a newly scored answer: which is newest is decided over the whole
    -- cell (the stored ones keep their scores and scored_at)
    select * from newly_scored
    union all
    -- the stored rows' columns are newly_scored's, in its order, and is_latest_in_cell
    select {{ star_except(['is_latest_in_cell'], 'stored') }}
    from {{ this }} as stored
    semi join touched using (question_id, model, condition, visibility, prompt_variant, sample_index)
    anti join newly_scored using (response_key)
),
{%- else %}

cell_answers as (
    select * from newly_scored
),
{%- endif %}

newest as (
    -- one aggregate per cell over the raw answers' keys, not a window over every scored answer (and
    -- not a second read of the wide scored rows): ordered by completeness, then load, then line, as
    -- response_key is load and line in one integer (macros/response_key.sql), and a complete answer
    -- outranks every truncated one
    select
        max_by(response_key, response_key + case when response_parse_status = 'truncated' then 0 else {{ complete_reply_rank() }} end)
            as newest_response_key
    from {{ ref('stg_raw__responses') }}
    {%- if is_incremental() and target.type == 'spark' %}
    where {{ to_score }}
    {%- elif is_incremental() %}
    semi join touched using (question_id, model, condition, visibility, prompt_variant, sample_index)
    {%- endif %}
    group by question_id, model, condition, visibility, prompt_variant, sample_index
),

final as (
    select
        cell_answers.*,
        newest.newest_response_key is not null as is_latest_in_cell
    from cell_answers
    left join newest on newest.newest_response_key = cell_answers.response_key
)

select * from final
