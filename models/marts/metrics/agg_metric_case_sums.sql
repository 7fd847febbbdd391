-- One row per metric cell at the finest grain (cohort x model x condition x
-- prompt_variant x metric x visibility x format x options_type) and case:
-- the case's sum of question-level values and its numbers of questions (all,
-- valid). Acc and HTR come from each cell's newest answer (full | masked),
-- dAcc, dHTR, AIR and HBR from the pairs (paired); NULL values (metric not
-- defined for the eval_target, unjudged free response) do not enter. The
-- bootstrap resamples cases, so these sums are all it needs; coarser cells
-- are sums of finer ones. cell_index and case_index number them for it.
with answers as (
    select * from {{ ref('fct_answers') }}
    where is_latest_in_cell
),

pairs as (
    select * from {{ ref('fct_answer_pairs') }}
),

cases as (
    select cohort, case_id, case_index from {{ ref('int_bootstrap_cases') }}
),

-- one pass over each fact table; the metrics are unpivoted after grouping
answer_sums as (
    select
        cohort, case_id, model, condition, prompt_variant, visibility, format, options_type,
        sum(acc) as acc_sum, count(acc) as acc_n, count(acc) filter (where parse_status <> 'invalid') as acc_valid,
        sum(htr) as htr_sum, count(htr) as htr_n, count(htr) filter (where parse_status <> 'invalid') as htr_valid
    from answers
    group by all
),

pair_sums as (
    select
        cohort, case_id, model, condition, prompt_variant, 'paired' as visibility, format, options_type,
        sum(delta_acc) as delta_acc_sum, count(delta_acc) as delta_acc_n, count(delta_acc) filter (where both_valid) as delta_acc_valid,
        sum(delta_htr) as delta_htr_sum, count(delta_htr) as delta_htr_n, count(delta_htr) filter (where both_valid) as delta_htr_valid,
        sum(air) as air_sum, count(air) as air_n, count(air) filter (where both_valid) as air_valid,
        sum(hbr) as hbr_sum, count(hbr) as hbr_n, count(hbr) filter (where both_valid) as hbr_valid
    from pairs
    group by all
),

case_sums as (
    {%- set unpivots = [('answer_sums', ['acc', 'htr']), ('pair_sums', ['delta_acc', 'delta_htr', 'air', 'hbr'])] %}
    {%- for relation, metrics in unpivots %}
    {%- for metric in metrics %}
    select
        cohort, model, condition, prompt_variant, '{{ metric }}' as metric, visibility, format,
        coalesce(options_type, '') as options_type, case_id,
        {{ metric }}_sum as value_sum, {{ metric }}_n as n_questions, {{ metric }}_valid as n_valid
    from {{ relation }}
    where {{ metric }}_n > 0
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
),

final as (
    select
        case_sums.cohort,
        case_sums.model,
        case_sums.condition,
        case_sums.prompt_variant,
        case_sums.metric,
        case_sums.visibility,
        case_sums.format,
        case_sums.options_type,
        case_sums.case_id,
        cases.case_index,
        cast(dense_rank() over (
            partition by case_sums.cohort
            order by case_sums.model, case_sums.condition, case_sums.prompt_variant, case_sums.metric,
                case_sums.visibility, case_sums.format, case_sums.options_type
        ) - 1 as bigint) as cell_index,
        cast(case_sums.value_sum as double) as value_sum,
        cast(case_sums.n_questions as bigint) as n_questions,
        cast(case_sums.n_valid as bigint) as n_valid
    from case_sums
    inner join cases
        on cases.cohort = case_sums.cohort
        and cases.case_id = case_sums.case_id
)

select * from final
