-- One row per distinct text to normalise for a question: every response's answer, and the
-- question's reference answer and hindsight trap, through the same versioned parser. A text's
-- normal form depends only on the question and the text, so each distinct pair is parsed once
-- (at 100x the paper's cases, 0.6 M texts for 17.8 M answers); NULL reads as the empty text.
-- true/false -> 'true' | 'false'; multiple choice -> the option letter, from
-- the full option string, a bare or punctuated letter (B, B., (B), B)), the
-- option text, or a punctuated letter followed by the option text; free
-- response -> the trimmed text. Anything else is invalid.
--
-- Incremental per question: a build normalises again every text of the questions that answers of
-- a new load answered, of reloaded questions, and of every question when this model, the option
-- parser or the parser version changed (texts_fingerprint). A question removed from the questions
-- keeps its texts until `hindsight build --full-refresh` (nothing joins them).
-- The incremental pattern (stored marks and fingerprint, changed keys, the same SQL over them,
-- replaced whole): docs/architecture.md#the-incremental-pattern.
{{ config(materialized=('table' if target.type == 'spark' else 'incremental'), unique_key='question_id',
          incremental_strategy='delete+insert', on_schema_change='fail') }}
{%- set fingerprint = code_fingerprint(['int_question_options'], answer_parser_version()) %}
with questions as (
    select question_id, format, correct_answer, hindsight_trap, load_id
    from {{ ref('int_questions_positioned') }}
),
{%- if is_incremental() %}

stored as (
    select
        coalesce(max(response_load_id), 0) as response_load_id,
        coalesce(max(question_load_id), 0) as question_load_id,
        coalesce(bool_or(texts_fingerprint <> '{{ fingerprint }}'), false) as recoded
    from {{ this }}
),

touched as (
    select question_id from {{ ref('stg_raw__responses') }}
    where load_id > (select response_load_id from stored)
    union
    select question_id from questions
    where load_id > (select question_load_id from stored) or (select recoded from stored)
),
{%- endif %}

response_texts as (
    select distinct question_id, coalesce(answer, '') as text from {{ ref('stg_raw__responses') }}
    {%- if is_incremental() %}
    where question_id in (select question_id from touched)
    {%- endif %}
),

options as (
    select * from {{ ref('int_question_options') }}
),

texts as (
    select questions.question_id, questions.format, questions.load_id as question_load_id, texts.text
    from (
        select question_id, text from response_texts
        union
        select question_id, coalesce(correct_answer, '') as text from questions
        union
        select question_id, hindsight_trap from questions where hindsight_trap is not null
    ) as texts
    inner join questions on questions.question_id = texts.question_id
    {%- if is_incremental() %}
    where texts.question_id in (select question_id from touched)
    {%- endif %}
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
        min_by(letter, match_rule) as letter,
        min_by(position, match_rule) as position
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
        best_option.position as option_position,
        texts.question_load_id
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
    {{ answer_parser_version() }} as parser_version,
    question_load_id,
    (select max(responses.load_id) from {{ ref('stg_raw__responses') }} as responses) as response_load_id,
    '{{ fingerprint }}' as texts_fingerprint
from final
