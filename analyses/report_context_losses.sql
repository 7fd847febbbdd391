-- Requests a model could not answer, per cohort x model x paired condition x prompt variant: lost to
-- the server's context window or to a shortened prompt, per side, and the pairs lost with them; a
-- cell whose two sides lost different shares carries its warning.
with losses as (
    select * from {{ ref('agg_pair_losses') }}
),

final as (
    select
        cohort,
        model,
        condition,
        prompt_variant,
        n_full_lost,
        n_full_asked,
        n_masked_lost,
        n_masked_asked,
        n_full_context_overflow + n_masked_context_overflow as n_context_overflow,
        n_prompt_truncated,
        n_pairs_lost,
        loss_warning
    from losses
    order by cohort, model, condition, prompt_variant
)

select * from final
