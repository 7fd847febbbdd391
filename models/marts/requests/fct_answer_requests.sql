-- One row per request the answering model must receive: question x
-- condition x visibility x prompt_variant (x narrative model for 3.x, whose
-- synthetic narrative is written by the answering model itself). Only the
-- visible question fields reach this mart.
with questions as (
    select question_id, cohort, case_id, question, format, options_json
    from {{ ref('int_questions_positioned') }}
),

conditions as (
    select * from {{ ref('conditions') }}
),

variants as (
    select prompt_variant from {{ ref('prompt_variants') }}
),

narratives as (
    select cohort, case_id, narrative_text from {{ ref('stg_raw__narratives') }}
),

contexts as (
    select * from {{ ref('int_tts_contexts_rendered') }}
),

synthetic as (
    select * from {{ ref('stg_raw__synthetic_narratives') }}
),

narrative_only as (
    select
        questions.question_id,
        conditions.condition,
        'full' as visibility,
        cast(null as varchar) as narrative_model,
        cast(null as varchar) as narrative_request_id,
        narratives.narrative_text as narrative,
        '[]' as tts_json
    from questions
    inner join conditions on conditions.tts_source is null
    inner join narratives
        on narratives.cohort = questions.cohort
        and narratives.case_id = questions.case_id
),

with_original_narrative as (
    select
        questions.question_id,
        conditions.condition,
        contexts.visibility,
        cast(null as varchar) as narrative_model,
        cast(null as varchar) as narrative_request_id,
        narratives.narrative_text as narrative,
        contexts.tts_json
    from questions
    inner join conditions on conditions.narrative_source = 'original' and conditions.tts_source is not null
    inner join narratives
        on narratives.cohort = questions.cohort
        and narratives.case_id = questions.case_id
    inner join contexts
        on contexts.question_id = questions.question_id
        and contexts.source = conditions.tts_source
),

tts_only as (
    select
        questions.question_id,
        conditions.condition,
        contexts.visibility,
        cast(null as varchar) as narrative_model,
        cast(null as varchar) as narrative_request_id,
        cast(null as varchar) as narrative,
        contexts.tts_json
    from questions
    inner join conditions on conditions.narrative_source is null and conditions.tts_source is not null
    inner join contexts
        on contexts.question_id = questions.question_id
        and contexts.source = conditions.tts_source
),

with_synthetic_narrative as (
    select
        questions.question_id,
        conditions.condition,
        contexts.visibility,
        synthetic.narrative_model,
        contexts.narrative_request_id,
        synthetic.narrative_text as narrative,
        contexts.tts_json
    from questions
    inner join conditions on conditions.narrative_source = 'synthetic'
    inner join contexts
        on contexts.question_id = questions.question_id
        and contexts.source = conditions.tts_source
    inner join synthetic
        on synthetic.narrative_request_id = contexts.narrative_request_id
),

contexts_by_condition as (
    select * from narrative_only
    union all
    select * from with_original_narrative
    union all
    select * from tts_only
    union all
    select * from with_synthetic_narrative
),

final as (
    select
        {{ surrogate_key(['contexts_by_condition.question_id', 'contexts_by_condition.condition',
                          'contexts_by_condition.visibility', 'variants.prompt_variant',
                          'contexts_by_condition.narrative_model']) }} as request_id,
        questions.question_id,
        questions.case_id,
        questions.cohort,
        contexts_by_condition.condition,
        contexts_by_condition.visibility,
        variants.prompt_variant,
        conditions.narrative_source,
        conditions.tts_source,
        contexts_by_condition.narrative_model,
        contexts_by_condition.narrative_request_id,
        contexts_by_condition.narrative,
        contexts_by_condition.tts_json,
        cast(json_object(
            'question', questions.question,
            'format', questions.format,
            'options', cast(questions.options_json as json)
        ) as varchar) as question_json,
        questions.format
    from contexts_by_condition
    inner join questions on questions.question_id = contexts_by_condition.question_id
    inner join conditions on conditions.condition = contexts_by_condition.condition
    cross join variants
)

select * from final
