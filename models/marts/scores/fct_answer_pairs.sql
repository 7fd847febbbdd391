-- One row per question x model x condition x prompt_variant x sample of a paired condition whose
-- full and masked answers both exist, scored (paper §3.7.2): int_answer_pairs, with the pair's
-- surrogate id and its answers' response ids.
--
-- A view: int_answer_pairs is the incremental table that pairs and scores answers, keyed by the
-- pair's natural key and its answers' response_key; the ids are computed and joined here.
{{ config(materialized='view') }}
with pairs as (
    select * from {{ ref('int_answer_pairs') }}
),

{%- for side in ['full', 'masked'] %}

{{ side }}_ids as (
    -- one row per response_key (int_response_provenance's key), joined plainly: a query of one model
    -- (the snapshot's publish of a model appended) reads that model's rows of it
    select
        response_key,
        response_id
    from {{ ref('int_response_provenance') }}
    where visibility = '{{ side }}'
),
{%- endfor %}

final as (
    select
        -- sample 0 keeps the id pairs had before there were samples
        case when pairs.sample_index = 0
            then {{ surrogate_key(['pairs.question_id', 'pairs.model', 'pairs.condition', 'pairs.prompt_variant']) }}
            else {{ surrogate_key(['pairs.question_id', 'pairs.model', 'pairs.condition', 'pairs.prompt_variant', 'pairs.sample_index']) }}
        end as pair_id,
        pairs.cohort,
        pairs.case_id,
        pairs.question_id,
        pairs.model,
        pairs.condition,
        pairs.prompt_variant,
        pairs.sample_index,
        pairs.identical_contexts,
        pairs.format,
        pairs.options_type,
        pairs.eval_target,
        full_side.response_id as full_response_id,
        masked_side.response_id as masked_response_id,
        pairs.both_valid,
        pairs.acc_full,
        pairs.acc_masked,
        pairs.htr_full,
        pairs.htr_masked,
        pairs.delta_acc,
        pairs.delta_htr,
        pairs.air,
        pairs.hbr,
        pairs.paired_judge_model,
        pairs.paired_judgment_id,
        pairs.judge_hbr_score,
        pairs.scored_at
    from pairs
    left join full_ids as full_side on full_side.response_key = pairs.full_response_key
    left join masked_ids as masked_side on masked_side.response_key = pairs.masked_response_key
)

select * from final
