-- Assert that no masked request context holds a TTS event after its question's cutoff.
-- Reads the JSON the model would receive, not the intermediate rows it came from.
with masked_requests as (
    select
        requests.request_id,
        requests.tts_json,
        questions.cutoff_hours
    from {{ ref('fct_answer_requests') }} as requests
    inner join {{ ref('dim_questions') }} as questions
        on questions.question_id = requests.question_id
    where requests.visibility = 'masked'
),

shown as (
    {{ json_array_rows('masked_requests', ['request_id', 'cutoff_hours'], 'tts_json', 'event', 'position') }}
),

shown_events as (
    select request_id, cutoff_hours, cast({{ json_text('event', 'time') }} as double) as time_hours
    from shown
)

select *
from shown_events
where time_hours > cutoff_hours
