-- One row per judgment `hindsight judge` asks for (Appendix C judge prompts): an individual
-- judgment of every free-response answer the metrics use (each cell's newest answer), and a
-- paired judgment of every free-response full/masked pair (a reply that was not the asked-for JSON,
-- or was cut off, is invalid and never judged). The judge sees the question, the
-- reference answer and the trap (as the paper's judge does); answering models never do.
--
-- A view: `hindsight judge` reads it one kind at a time, and a table would store every free-response
-- answer's question again (5.2 M rows at 100x the paper's cases, a fifth of a full build).
{{ config(materialized='view') }}
with questions as (
    select * from {{ ref('dim_questions') }}
),

answers as (
    -- the free-response answers, from the narrow scored table (fct_answers would join every
    -- answer's provenance)
    select answers.*, texts.response_id, texts.answer
    from {{ ref('int_answers_scored') }} as answers
    inner join {{ ref('int_questions_positioned') }} as free_response
        on free_response.question_id = answers.question_id and free_response.format = 'free response'
    inner join {{ ref('fct_answer_texts') }} as texts on texts.response_key = answers.response_key
    where answers.parse_status not in ('invalid', 'truncated')
),

individual as (
    select
        'individual' as judgment_kind,
        answers.response_id as target_id,
        answers.question_id,
        answers.model,
        answers.condition,
        answers.prompt_variant,
        answers.visibility,
        answers.response_id,
        cast(null as string) as full_response_id,
        cast(null as string) as masked_response_id,
        answers.answer,
        cast(null as string) as full_answer,
        cast(null as string) as masked_answer
    from answers
    where answers.is_latest_in_cell
),

paired as (
    select
        'paired' as judgment_kind,
        full_answers.response_id || '|' || masked_answers.response_id as target_id,
        pairs.question_id,
        pairs.model,
        pairs.condition,
        pairs.prompt_variant,
        'paired' as visibility,
        cast(null as string) as response_id,
        full_answers.response_id as full_response_id,
        masked_answers.response_id as masked_response_id,
        cast(null as string) as answer,
        full_answers.answer as full_answer,
        masked_answers.answer as masked_answer
    -- the pairs' answers by their raw rows' keys (fct_answer_pairs would look their ids up among all)
    from {{ ref('int_answer_pairs') }} as pairs
    inner join answers as full_answers on full_answers.response_key = pairs.full_response_key
    inner join answers as masked_answers on masked_answers.response_key = pairs.masked_response_key
    where pairs.format = 'free response'
),

profile as (
    select * from {{ sampling_profile_relation('judge') }}
),

final as (
    select
        {{ surrogate_key(['requests.judgment_kind', 'requests.target_id']) }} as judgment_request_id,
        requests.*,
        questions.question,
        questions.correct_answer as reference_answer,
        questions.hindsight_trap,
        {{ sampling_profile_columns('profile') }}
    from (select * from individual union all select * from paired) as requests
    inner join questions on questions.question_id = requests.question_id
    cross join profile
)

select * from final
