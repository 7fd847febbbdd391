-- One row per answer request x model x sample that was asked but could not be answered: its newest
-- call overflowed the model's context window (context_overflow: counted, never sent) or was answered
-- by a server that had shortened the prompt (prompt_truncated: never an answer). A request answered
-- since (asked again after the server's context was raised) is not lost. Such requests drop out of
-- the paired metrics; agg_answer_completion and agg_pair_losses count them, so that a design whose
-- full-visibility contexts overflow more often than the masked ones is never silently biased.
with lost_calls as (
    select
        model,
        target_id as request_id,
        sample_index,
        max_by(case when call_status = 'context_overflow' then 'context_overflow' else 'prompt_truncated' end, finished_at)
            as lost_to
    from {{ ref('stg_raw__llm_calls') }}
    where purpose = 'answer' and (call_status = 'context_overflow' or parse_status = 'prompt_truncated')
    group by model, target_id, sample_index
),

requests as (
    select request_id, cohort, question_id, condition, visibility, prompt_variant
    from {{ ref('fct_answer_requests') }}
),

lost as (
    select
        requests.cohort,
        lost_calls.model,
        requests.question_id,
        requests.condition,
        requests.visibility,
        requests.prompt_variant,
        lost_calls.sample_index,
        lost_calls.lost_to
    from lost_calls
    inner join requests on requests.request_id = lost_calls.request_id
),

answered as (
    -- the answers of the lost requests' models to their questions: when nothing was lost (as a rule)
    -- no answer is read, where a distinct over every answer (17.8 M at 100x the paper's cases) cost
    -- each of this view's readers and tests 2 s
    select distinct
        answers.model,
        answers.question_id,
        answers.condition,
        answers.visibility,
        answers.prompt_variant,
        answers.sample_index
    from {{ ref('int_answers_scored') }} as answers
    where exists (
        select 1 from lost
        where lost.model = answers.model and lost.question_id = answers.question_id
    )
),

final as (
    select lost.*
    from lost
    left join answered
        on answered.model = lost.model
        and answered.question_id = lost.question_id
        and answered.condition = lost.condition
        and answered.visibility = lost.visibility
        and answered.prompt_variant = lost.prompt_variant
        and answered.sample_index = lost.sample_index
    where answered.model is null
)

select * from final
