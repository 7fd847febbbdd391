-- One row per question x model x condition x prompt_variant x sample of a
-- paired condition with both visibilities answered: Acc and HTR full and
-- masked, dAcc, dHTR, AIR and HBR (paper §3.7.2).
with pairs as (
    select * from {{ ref('int_answer_pairs_scored') }}
),

final as (
    select
        -- sample 0 keeps the id pairs had before there were samples
        case when sample_index = 0
            then {{ surrogate_key(['question_id', 'model', 'condition', 'prompt_variant']) }}
            else {{ surrogate_key(['question_id', 'model', 'condition', 'prompt_variant', 'sample_index']) }}
        end as pair_id,
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
        full_response_id,
        masked_response_id,
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
        cast(judge_hbr_score as double) as judge_hbr_score
    from pairs
)

select * from final
