-- One row per question x model x condition x prompt_variant x sample of a paired condition (1.x,
-- 2.x, 3.x) whose full and masked answers both exist (the newest of each cell and sample; sample k
-- of the full request pairs with sample k of the masked one): paper §3.7.2. `identical_contexts`
-- flags pairs whose masked context is the full one (cutoff at or after the last event): asked as
-- two independent calls, but any difference is noise. dAcc = Acc(masked) - Acc(full) over accuracy
-- and both questions; dHTR = HTR(full) - HTR(masked) over hindsight_bias and both questions; AIR =
-- 1[answers differ] over all; HBR (eq. 6, both questions only) = 1[Acc(masked) = 1] * HTR(full).
-- Free-response pairs take the four scores and full_equals_masked from the paired judgment (a judge
-- returns every score whatever the eval target; the ones the target does not use are ignored); the
-- judge's own hbr_score is kept beside HBR.
--
-- Keys, not ids: the pair is keyed by its natural key and its answers by their raw rows'
-- response_key; fct_answer_pairs (a view) adds pair_id and the response ids. At 100x the paper's
-- cases (8.2 M pairs) writing the two md5 response ids and the md5 pair_id took a third of this
-- model's time.
--
-- Incremental: only pairs with an answer scored since the last build, or whose paired judgment
-- changed, are rewritten (on Spark: every pair of the models that have one, the table's
-- partitions). A reload of TTS (identical_contexts) needs `hindsight build --full-refresh`.
-- The incremental pattern (stored marks and fingerprint, changed keys, the same SQL over them,
-- replaced whole): docs/architecture.md#the-incremental-pattern.
{{ config(**fact_config(['question_id', 'model', 'condition', 'prompt_variant', 'sample_index'])) }}
with paired_judgments as (
    -- the newest judgment of each pair of answers: a judgment names its answers by response id
    -- (unique among the raw answers, tested there), the pairs by their raw rows' response_key
    select
        judgments.*,
        full_side.response_key as full_response_key,
        masked_side.response_key as masked_response_key,
        row_number() over (
            partition by full_side.response_key, masked_side.response_key order by judgments.judged_at desc, judgments.judge_model
        ) as judge_rank
    from {{ ref('int_judgments') }} as judgments
    inner join {{ ref('stg_raw__responses') }} as full_side on full_side.response_id = judgments.full_response_id
    inner join {{ ref('stg_raw__responses') }} as masked_side on masked_side.response_id = judgments.masked_response_id
    where judgments.kind = 'paired'
    qualify judge_rank = 1
),

{%- if is_incremental() and target.type == 'spark' %}
stored as (
    select model, max(scored_at) as scored_at from {{ this }} group by model
),

touched_models as (
    select answers.model
    from {{ ref('int_answers_scored') }} as answers
    left join stored on stored.model = answers.model
    where answers.is_latest_in_cell and answers.condition <> '0'
    group by answers.model
    having max(answers.scored_at) > coalesce(max(stored.scored_at), cast('1970-01-01' as timestamp))
    union
    select pairs.model
    from {{ this }} as pairs
    inner join paired_judgments
        on paired_judgments.full_response_key = pairs.full_response_key
        and paired_judgments.masked_response_key = pairs.masked_response_key
    where pairs.paired_judgment_id is distinct from paired_judgments.judgment_id
),
{%- elif is_incremental() %}
touched as (
    -- the (narrow) keys of pairs with an answer scored since the last build
    select question_id, model, condition, prompt_variant, sample_index
    from {{ ref('int_answers_scored') }}
    where is_latest_in_cell and condition <> '0'
        and scored_at > (select coalesce(max(scored_at), '1970-01-01') from {{ this }})
    union
    select pairs.question_id, pairs.model, pairs.condition, pairs.prompt_variant, pairs.sample_index
    from {{ this }} as pairs
    inner join paired_judgments
        on paired_judgments.full_response_key = pairs.full_response_key
        and paired_judgments.masked_response_key = pairs.masked_response_key
    where pairs.paired_judgment_id is distinct from paired_judgments.judgment_id
),
{%- endif %}
{%- for visibility in ['full', 'masked'] %}

{{ visibility }}_answers as (
    -- each side read once on its own, so no shared CTE of every newest answer is materialised; from
    -- the narrow scored table (fct_answers would join every answer's provenance)
    select * from {{ ref('int_answers_scored') }}
    {%- if is_incremental() and target.type != 'spark' %}
    semi join touched using (question_id, model, condition, prompt_variant, sample_index)
    {%- endif %}
    where is_latest_in_cell and condition <> '0' and visibility = '{{ visibility }}'
    {%- if is_incremental() and target.type == 'spark' %}
        and model in (select model from touched_models)
    {%- endif %}
),
{%- endfor %}

conditions as (
    select condition, tts_source from {{ ref('conditions') }}
),

questions as (
    select question_id, cohort, case_id, format, options_type, eval_target from {{ ref('int_questions_positioned') }}
),

identical_contexts as (
    -- per question and TTS source, not per pair: whether masking left the context as it was
    select
        question_id,
        source,
        coalesce(max(tts_json) filter (where visibility = 'full') = max(tts_json) filter (where visibility = 'masked'), false)
            as identical_contexts
    from {{ ref('int_tts_contexts_rendered') }}
    group by question_id, source
),

pairs as (
    select
        questions.cohort,
        questions.case_id,
        full_answer.question_id,
        full_answer.model,
        full_answer.condition,
        full_answer.prompt_variant,
        full_answer.sample_index,
        coalesce(contexts.identical_contexts, false) as identical_contexts,
        questions.format,
        questions.options_type,
        questions.eval_target,
        full_answer.response_key as full_response_key,
        masked_answer.response_key as masked_response_key,
        full_answer.parse_status not in ('invalid', 'truncated')
        and masked_answer.parse_status not in ('invalid', 'truncated') as both_valid,
        paired_judgments.judge_model as paired_judge_model,
        paired_judgments.judgment_id as paired_judgment_id,
        greatest(full_answer.scored_at, masked_answer.scored_at) as scored_at,
        case when questions.format = 'free response'
            then coalesce(paired_judgments.full_accuracy_score, full_answer.acc) else full_answer.acc end as acc_full,
        case when questions.format = 'free response'
            then coalesce(paired_judgments.masked_accuracy_score, masked_answer.acc) else masked_answer.acc end as acc_masked,
        case when questions.format = 'free response'
            then coalesce(paired_judgments.full_htr_score, full_answer.htr) else full_answer.htr end as htr_full,
        case when questions.format = 'free response'
            then coalesce(paired_judgments.masked_htr_score, masked_answer.htr) else masked_answer.htr end as htr_masked,
        case when questions.format = 'free response'
            then case when paired_judgments.full_equals_masked then 0.0
                      when not paired_judgments.full_equals_masked then 1.0 end
            else case when full_answer.comparison_hash = masked_answer.comparison_hash then 0.0 else 1.0 end
        end as air,
        paired_judgments.hbr_score as judge_hbr_score
    from full_answers as full_answer
    inner join masked_answers as masked_answer
        on masked_answer.question_id = full_answer.question_id
        and masked_answer.model = full_answer.model
        and masked_answer.condition = full_answer.condition
        and masked_answer.prompt_variant = full_answer.prompt_variant
        and masked_answer.sample_index = full_answer.sample_index
    inner join questions on questions.question_id = full_answer.question_id
    inner join conditions on conditions.condition = full_answer.condition
    left join identical_contexts as contexts
        on contexts.question_id = full_answer.question_id
        and contexts.source = conditions.tts_source
    left join paired_judgments
        on paired_judgments.full_response_key = full_answer.response_key
        and paired_judgments.masked_response_key = masked_answer.response_key
),

targeted as (
    -- the scores a question's eval target defines (§3.7): Acc for accuracy and both, HTR for
    -- hindsight_bias and both
    select
        {{ star_except(['acc_full', 'acc_masked', 'htr_full', 'htr_masked']) }},
        case when eval_target in ('accuracy', 'both') then acc_full end as acc_full,
        case when eval_target in ('accuracy', 'both') then acc_masked end as acc_masked,
        case when eval_target in ('hindsight_bias', 'both') then htr_full end as htr_full,
        case when eval_target in ('hindsight_bias', 'both') then htr_masked end as htr_masked
    from pairs
),

scored as (
    select
        *,
        acc_masked - acc_full as delta_acc,
        htr_full - htr_masked as delta_htr,
        case
            when eval_target <> 'both' or acc_masked is null or htr_full is null then null
            when acc_masked = 1 then htr_full
            else 0.0
        end as hbr
    from targeted
),

final as (
    select
        cohort,
        case_id,
        question_id,
        model,
        condition,
        prompt_variant,
        cast(sample_index as integer) as sample_index,
        identical_contexts,
        format,
        options_type,
        eval_target,
        full_response_key,
        masked_response_key,
        both_valid,
        cast(acc_full as double) as acc_full,
        cast(acc_masked as double) as acc_masked,
        cast(htr_full as double) as htr_full,
        cast(htr_masked as double) as htr_masked,
        cast(delta_acc as double) as delta_acc,
        cast(delta_htr as double) as delta_htr,
        cast(air as double) as air,
        cast(hbr as double) as hbr,
        paired_judge_model,
        paired_judgment_id,
        cast(judge_hbr_score as double) as judge_hbr_score,
        scored_at
    from scored
)

select * from final
