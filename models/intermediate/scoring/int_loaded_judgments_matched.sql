{{ config(materialized='table') }}
-- One row per loaded judgment line with the answers it judges and whether the build can use it.
-- A judgment names its answers as responses name them (question, model, condition, visibility,
-- prompt variant, sample), so it may be loaded before them: it judges the newest answer of its cell
-- stored before the judgment was loaded (load ids only grow), a complete one before a truncated one,
-- or, when none was, the first one stored after it. Either way the match never moves to an answer
-- stored later, which the judgment did not see. match_status says why a judgment is not used:
-- question_not_loaded, not_free_response, no_answer (a side has no answer yet), score_missing (a
-- score its question's eval target uses is absent); int_judgments_unmatched lists them.
{#- a table, so the match is made once a build; with no loaded judgment (the common case) it reads
    no answer at all: the raw answers are 17.8 M rows at 100x the paper's cases #}
{%- set any_loaded = loaded_judgments_exist() %}
with judgments as (
    select * from {{ ref('stg_raw__loaded_judgments') }}
),

sides as (
    -- the answers a judgment names: its own visibility when individual, full and masked when paired
    select
        judgments.judgment_id,
        judgments.load_id,
        judgments.question_id,
        judgments.model,
        judgments.condition,
        judgments.prompt_variant,
        judgments.sample_index,
        side.visibility
    from judgments
    cross join (values ('full'), ('masked')) as side (visibility)
    where judgments.kind = 'paired' or side.visibility = judgments.visibility
),

candidates as (
    {%- if any_loaded %}
    select
        sides.judgment_id,
        sides.visibility,
        responses.response_id,
        row_number() over (
            partition by sides.judgment_id, sides.visibility
            order by
                responses.load_id < sides.load_id desc,
                responses.response_parse_status = 'truncated',
                case when responses.load_id < sides.load_id then -responses.response_key else responses.response_key end
        ) as pick
    from sides
    inner join {{ ref('stg_raw__responses') }} as responses
        on
            responses.question_id = sides.question_id
            and responses.model = sides.model
            and responses.condition = sides.condition
            and responses.visibility = sides.visibility
            and responses.prompt_variant = sides.prompt_variant
            and responses.sample_index = sides.sample_index
    {%- else %}
    select
        judgment_id,
        visibility,
        cast(null as string) as response_id,
        cast(1 as bigint) as pick
    from sides
    where false
    {%- endif %}
),

chosen as (
    select
        judgment_id,
        max(response_id) filter (where visibility = 'full') as full_response_id,
        max(response_id) filter (where visibility = 'masked') as masked_response_id
    from candidates
    where pick = 1
    group by judgment_id
),

questions as (
    select
        question_id,
        format,
        eval_target
    from {{ ref('stg_raw__questions') }}
),

matched as (
    select
        judgments.*,
        questions.eval_target,
        case when judgments.kind = 'individual' then coalesce(chosen.full_response_id, chosen.masked_response_id) end
            as response_id,
        case when judgments.kind = 'paired' then chosen.full_response_id end as full_response_id,
        case when judgments.kind = 'paired' then chosen.masked_response_id end as masked_response_id,
        case
            when questions.question_id is null then 'question_not_loaded'
            when questions.format <> 'free response' then 'not_free_response'
            when judgments.kind = 'individual' and coalesce(chosen.full_response_id, chosen.masked_response_id) is null
                then 'no_answer'
            when judgments.kind = 'paired' and (chosen.full_response_id is null or chosen.masked_response_id is null)
                then 'no_answer'
            -- the scores the question's eval target uses (§3.7): Acc for accuracy and both, HTR for
            -- hindsight_bias and both; the others are stored and ignored
            when judgments.kind = 'individual' and (
                (questions.eval_target in ('accuracy', 'both') and judgments.accuracy_score is null)
                or (questions.eval_target in ('hindsight_bias', 'both') and judgments.htr_score is null)
            ) then 'score_missing'
            when judgments.kind = 'paired' and (
                (
                    questions.eval_target in ('accuracy', 'both')
                    and (judgments.full_accuracy_score is null or judgments.masked_accuracy_score is null)
                )
                or (
                    questions.eval_target in ('hindsight_bias', 'both')
                    and (judgments.full_htr_score is null or judgments.masked_htr_score is null)
                )
            ) then 'score_missing'
            else 'matched'
        end as match_status
    from judgments
    left join chosen on chosen.judgment_id = judgments.judgment_id
    left join questions on questions.question_id = judgments.question_id
)

select * from matched
