-- One row per distinct text to normalise for a question: every response's answer, and the
-- question's reference answer and hindsight trap, through the same versioned parser. A text's
-- normal form depends only on the question and the text, so each distinct pair is parsed once
-- (at 100x the paper's cases, 0.6 M texts for 17.8 M answers); NULL reads as the empty text.
-- true/false -> 'true' | 'false'; multiple choice -> the option letter, from
-- the full option string, a bare or punctuated letter (B, B., (B), B)), the
-- option text, or a punctuated letter followed by the option text; free
-- response -> the trimmed text. Anything else is invalid.
{{ config(materialized='table') }}
with questions as (
    select question_id, format, correct_answer, hindsight_trap
    from {{ ref('int_questions_positioned') }}
),

response_texts as (
    select distinct question_id, coalesce(answer, '') as text from {{ ref('stg_raw__responses') }}
),

options as (
    select * from {{ ref('int_question_options') }}
),

texts as (
    select questions.question_id, questions.format, texts.text
    from (
        select question_id, text from response_texts
        union
        select question_id, coalesce(correct_answer, '') from questions
        union
        select question_id, hindsight_trap from questions where hindsight_trap is not null
    ) as texts
    inner join questions on questions.question_id = texts.question_id
),

option_matches as (
    select
        texts.question_id,
        texts.text,
        options.letter,
        options.position,
        case
            when lower(trim(texts.text)) = lower(options.full_option) then 1
            when upper(regexp_extract(trim(texts.text), '^\(?([A-Za-z])[.):]?$', 1)) = options.letter then 2
            when lower(trim(texts.text)) = lower(options.option_text) then 3
            when upper(regexp_extract(trim(texts.text), '^\(?([A-Za-z])[.):]\s*(.*)$', 1)) = options.letter
                and lower(trim(regexp_extract(trim(texts.text), '^\(?([A-Za-z])[.):]\s*(.*)$', 2))) = lower(options.option_text)
                then 4
        end as match_rule
    from texts
    inner join options on options.question_id = texts.question_id
    where texts.format = 'multiple choice'
),

best_option as (
    select
        question_id,
        text,
        arg_min(letter, match_rule) as letter,
        arg_min(position, match_rule) as position
    from option_matches
    where match_rule is not null
    group by question_id, text
),

final as (
    select
        texts.question_id,
        texts.format,
        texts.text,
        case
            when texts.format = 'true/false'
                then regexp_extract(lower(trim(texts.text)), '^(true|false)\.?$', 1)
            when texts.format = 'multiple choice' then best_option.letter
            when texts.format = 'free response' then trim(texts.text)
        end as normalised_raw,
        best_option.position as option_position
    from texts
    left join best_option
        on best_option.question_id = texts.question_id
        and best_option.text = texts.text
)

select
    question_id,
    format,
    text,
    nullif(normalised_raw, '') as normalised,
    option_position,
    case
        when nullif(normalised_raw, '') is null then 'invalid'
        when format = 'free response' then 'free_text'
        else 'valid'
    end as parse_status,
    {{ answer_parser_version() }} as parser_version
from final
