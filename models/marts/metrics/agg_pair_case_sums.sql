{{ config(materialized='view') }}
-- One row per pair cell (cohort x model x condition x prompt_variant x format
-- x options_type) and case: sums, counts and valid counts of dAcc, dHTR, AIR
-- and HBR over the case's paired questions. One pass over fct_answer_pairs;
-- the bootstrap reads it.
with pairs as (
    select * from {{ ref('fct_answer_pairs') }}
),

final as (
    select
        cohort,
        case_id,
        model,
        condition,
        prompt_variant,
        'paired' as visibility,
        format,
        coalesce(options_type, '') as options_type,
        {%- for metric in ['delta_acc', 'delta_htr', 'air', 'hbr'] %}
        sum({{ metric }}) as {{ metric }}_sum,
        count({{ metric }}) as {{ metric }}_n,
        count({{ metric }}) filter (where both_valid) as {{ metric }}_valid{{ ',' if not loop.last }}
        {%- endfor %}
    from pairs
    group by all
)

select * from final
