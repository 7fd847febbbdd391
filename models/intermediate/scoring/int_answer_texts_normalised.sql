-- One row per answer text to normalise: every response, and every question's
-- reference answer and hindsight trap, through the same versioned parser.
-- true/false -> 'true' | 'false'; multiple choice -> the option letter, from
-- the full option string, a bare or punctuated letter (B, B., (B), B)), the
-- option text, or a punctuated letter followed by the option text; free
-- response -> the trimmed text. Anything else is invalid.
with questions as (
    select question_id, format, correct_answer, hindsight_trap
    from {{ ref('int_questions_positioned') }}
),

responses as (
    select response_id, question_id, answer from {{ ref('stg_raw__responses') }}
),

options as (
    select * from {{ ref('int_question_options') }}
),

texts as (
    select 'response' as text_kind, responses.response_id as text_key, questions.question_id, questions.format, responses.answer as text
    from responses
    inner join questions on questions.question_id = responses.question_id
    union all
    select 'reference', question_id, question_id, format, correct_answer from questions
    union all
    select 'trap', question_id, question_id, format, hindsight_trap from questions
    where hindsight_trap is not null
),

option_matches as (
    select
        texts.text_kind,
        texts.text_key,
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
        text_kind,
        text_key,
        arg_min(letter, match_rule) as letter,
        arg_min(position, match_rule) as position
    from option_matches
    where match_rule is not null
    group by text_kind, text_key
),

final as (
    select
        texts.text_kind,
        texts.text_key,
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
        on best_option.text_kind = texts.text_kind
        and best_option.text_key = texts.text_key
)

select
    text_kind,
    text_key,
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
