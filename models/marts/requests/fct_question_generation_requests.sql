-- One row per case that `hindsight generate questions` asks the generator about (§3.3,
-- Appendix C): every case with a narrative, with its reference-source TTS as the JSON array of
-- {event, time} objects in chronological order that the generator prompt shows ('[]' if none).
with cases as (
    select * from {{ ref('dim_cases') }}
    where has_narrative
),

narratives as (
    select * from {{ ref('stg_raw__narratives') }}
),

reference_tts as (
    select
        cohort,
        case_id,
        '[' || {{ ordered_string_agg(json_object_text([('event', 'event'), ('time', 'time_hours')]), "', '",
                                     'chronological_index') }} || ']' as tts_json,
        count(*) as n_events
    from {{ ref('fct_tts_events') }}
    where source = '{{ var("reference_source") }}'
    group by cohort, case_id
),

profile as (
    select * from {{ sampling_profile_relation('question_generation') }}
),

final as (
    select
        {{ surrogate_key(['cases.cohort', 'cases.case_id']) }} as question_generation_request_id,
        cases.cohort,
        cases.case_id,
        narratives.narrative_text,
        coalesce(reference_tts.tts_json, '[]') as tts_json,
        cast(coalesce(reference_tts.n_events, 0) as integer) as n_events,
        {{ sampling_profile_columns('profile') }}
    from cases
    inner join narratives using (cohort, case_id)
    left join reference_tts using (cohort, case_id)
    cross join profile
)

select * from final
