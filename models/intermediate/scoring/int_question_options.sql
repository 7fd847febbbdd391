-- One row per option of a multiple choice question: its 1-based position,
-- letter ("A" for "A. <10%"; by position when the option has no letter),
-- and text without the letter.
with questions as (
    select question_id, options_json
    from {{ ref('int_questions_positioned') }}
    where format = 'multiple choice' and options_json is not null
),

elements as (
    {{ json_array_rows('questions', ['question_id'], 'options_json', 'full_option', 'position') }}
),

unnested as (
    select question_id, position, trim(full_option) as full_option
    from elements
),

final as (
    select
        question_id,
        position,
        full_option,
        coalesce(
            nullif(upper(regexp_extract(full_option, '^\(?([A-Za-z])[.):]\s', 1)), ''),
            chr(64 + position)
        ) as letter,
        coalesce(
            nullif(trim(regexp_extract(full_option, '^\(?[A-Za-z][.):]\s+(.*)$', 1)), ''),
            full_option
        ) as option_text
    from unnested
)

select * from final
