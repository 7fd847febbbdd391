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

profile as (
    select * from {{ sampling_profile_relation('answer') }}
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

-- each condition takes the narrative and TTS its seed row names; a request
-- exists only when every part the condition needs is there
contexts_by_condition as (
    select
        questions.question_id,
        conditions.condition,
        coalesce(contexts.visibility, 'full') as visibility,
        synthetic.narrative_model,
        case when conditions.narrative_source = 'synthetic' then contexts.narrative_request_id end as narrative_request_id,
        case conditions.narrative_source
            when 'original' then narratives.narrative_text
            when 'synthetic' then synthetic.narrative_text
        end as narrative,
        coalesce(contexts.tts_json, '[]') as tts_json
    from questions
    cross join conditions
    left join narratives
        on conditions.narrative_source = 'original'
        and narratives.cohort = questions.cohort
        and narratives.case_id = questions.case_id
    left join contexts
        on contexts.question_id = questions.question_id
        and contexts.source = conditions.tts_source
    left join synthetic
        on conditions.narrative_source = 'synthetic'
        and synthetic.narrative_request_id = contexts.narrative_request_id
    where (conditions.narrative_source is distinct from 'original' or narratives.case_id is not null)
      and (conditions.narrative_source is distinct from 'synthetic' or synthetic.narrative_text is not null)
      and (conditions.tts_source is null or contexts.question_id is not null)
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
        {{ json_object_text([('question', 'questions.question'), ('format', 'questions.format'),
                             ('options', json_value('questions.options_json'))]) }} as question_json,
        questions.format,
        {{ sampling_profile_columns('profile') }}
    from contexts_by_condition
    inner join questions on questions.question_id = contexts_by_condition.question_id
    inner join conditions on conditions.condition = contexts_by_condition.condition
    cross join variants
    cross join profile
)

select * from final
