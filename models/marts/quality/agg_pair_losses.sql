-- One row per cohort x model x paired condition x prompt_variant with a request that could not be
-- answered (int_answer_requests_lost): how many requests x samples each side (full, masked) lost to
-- the context window or to a shortened prompt, against how many it asked, and how many pairs the
-- paired metrics lost with them. Full contexts are longer than masked ones, so they overflow first:
-- when the two sides lost different shares, the surviving pairs are not the pairs of the design, and
-- the row says so (`loss_warning`). `hindsight status` and the report show these rows.
with lost as (
    select lost.*
    from {{ ref('int_answer_requests_lost') }} as lost
    inner join {{ ref('conditions') }} as conditions on conditions.condition = lost.condition and conditions.is_paired
),

answered as (
    -- the answered requests x samples of the same groups (the newest answer of each cell)
    select questions.cohort, answers.model, answers.condition, answers.prompt_variant, answers.visibility, count(*) as n_answered
    from {{ ref('int_answers_scored') }} as answers
    inner join {{ ref('int_questions_positioned') }} as questions on questions.question_id = answers.question_id
    inner join (select distinct model, condition, prompt_variant from lost) as groups
        on groups.model = answers.model and groups.condition = answers.condition and groups.prompt_variant = answers.prompt_variant
    where answers.is_latest_in_cell
    group by all
),

lost_by_side as (
    select
        cohort,
        model,
        condition,
        prompt_variant,
        count(*) filter (where visibility = 'full') as n_full_lost,
        count(*) filter (where visibility = 'masked') as n_masked_lost,
        count(*) filter (where visibility = 'full' and lost_to = 'context_overflow') as n_full_context_overflow,
        count(*) filter (where visibility = 'masked' and lost_to = 'context_overflow') as n_masked_context_overflow,
        count(*) filter (where lost_to = 'prompt_truncated') as n_prompt_truncated,
        count(distinct question_id || ':' || cast(sample_index as {{ dbt.type_string() }})) as n_pairs_lost
    from lost
    group by cohort, model, condition, prompt_variant
),

shares as (
    select
        lost_by_side.*,
        lost_by_side.n_full_lost + coalesce(full_answered.n_answered, 0) as n_full_asked,
        lost_by_side.n_masked_lost + coalesce(masked_answered.n_answered, 0) as n_masked_asked
    from lost_by_side
    left join answered as full_answered
        on full_answered.cohort = lost_by_side.cohort and full_answered.model = lost_by_side.model
        and full_answered.condition = lost_by_side.condition and full_answered.prompt_variant = lost_by_side.prompt_variant
        and full_answered.visibility = 'full'
    left join answered as masked_answered
        on masked_answered.cohort = lost_by_side.cohort and masked_answered.model = lost_by_side.model
        and masked_answered.condition = lost_by_side.condition and masked_answered.prompt_variant = lost_by_side.prompt_variant
        and masked_answered.visibility = 'masked'
),

final as (
    select
        cohort,
        model,
        condition,
        prompt_variant,
        cast(n_full_asked as integer) as n_full_asked,
        cast(n_masked_asked as integer) as n_masked_asked,
        cast(n_full_lost as integer) as n_full_lost,
        cast(n_masked_lost as integer) as n_masked_lost,
        cast(n_full_context_overflow as integer) as n_full_context_overflow,
        cast(n_masked_context_overflow as integer) as n_masked_context_overflow,
        cast(n_prompt_truncated as integer) as n_prompt_truncated,
        cast(n_pairs_lost as integer) as n_pairs_lost,
        case when n_full_asked > 0 then n_full_lost / n_full_asked end as full_loss_share,
        case when n_masked_asked > 0 then n_masked_lost / n_masked_asked end as masked_loss_share,
        case
            when n_full_lost * n_masked_asked <> n_masked_lost * n_full_asked
                then 'full lost ' || cast(n_full_lost as {{ dbt.type_string() }}) || ' of ' || cast(n_full_asked as {{ dbt.type_string() }})
                    || ', masked ' || cast(n_masked_lost as {{ dbt.type_string() }}) || ' of ' || cast(n_masked_asked as {{ dbt.type_string() }})
                    || ': the surviving pairs are not the pairs of the design'
        end as loss_warning
    from shares
)

select * from final
