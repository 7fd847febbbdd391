-- One row per question x model x condition x prompt_variant x visibility (full, masked; 'paired' for
-- pairs): the additive parts of every metric, so that sum(part) / sum(part) over any set of rows is
-- the estimator's point estimate of that slice (ingest/stats/metric_estimates.py): a metric's value
-- in a slice is sum(<metric>_sum) / sum(<metric>_n), its validity rate sum(<metric>_valid) /
-- sum(<metric>_n). A question's value is the mean over its samples (answers, or pairs), valid when
-- every sample is, exactly as int_metric_case_sums sums it; <metric>_n is 1 where the question has a
-- value (NULL values: not defined for the eval_target, or a free response not judged yet). The
-- slicing dimensions of dim_questions and dim_cases ride along, so a BI tool needs no join.
-- The semantic layer's metrics (_metrics__models.yml) are declared over it; `hindsight metrics`
-- reads it for the intervals of any slice.
{{ config(materialized='view') }}
{%- set answer_metrics = ['acc', 'htr'] %}
{%- set pair_metrics = ['delta_acc', 'delta_htr', 'air', 'hbr'] %}
with answers as (
    select
        question_id,
        model,
        condition,
        prompt_variant,
        visibility,
        count(*) as n_answers,
        sum(case when parse_status not in ('invalid', 'truncated') then 1 else 0 end) as n_valid_answers,
        bool_and(parse_status not in ('invalid', 'truncated')) as is_valid,
        {%- for metric in answer_metrics %}
        avg({{ metric }}) as {{ metric }},
        {%- endfor %}
        {%- for metric in pair_metrics %}
        cast(null as double) as {{ metric }},
        {%- endfor %}
        max(scored_at) as scored_at
    from {{ ref('int_answers_scored') }}
    where is_latest_in_cell
    group by question_id, model, condition, prompt_variant, visibility
),

pairs as (
    select
        question_id,
        model,
        condition,
        prompt_variant,
        'paired' as visibility,
        count(*) as n_answers,
        sum(case when both_valid then 1 else 0 end) as n_valid_answers,
        bool_and(both_valid) as is_valid,
        {%- for metric in answer_metrics %}
        cast(null as double) as {{ metric }},
        {%- endfor %}
        {%- for metric in pair_metrics %}
        avg({{ metric }}) as {{ metric }},
        {%- endfor %}
        max(scored_at) as scored_at
    from {{ ref('int_answer_pairs') }}
    group by question_id, model, condition, prompt_variant
),

questions as (
    select * from {{ ref('dim_questions') }}
),

cases as (
    select * from {{ ref('dim_cases') }}
),

final as (
    select
        questions.cohort,
        questions.case_id,
        parts.question_id,
        parts.model,
        parts.condition,
        parts.prompt_variant,
        parts.visibility,
        questions.format,
        questions.options_type,
        questions.eval_target,
        questions.hindsight_trap is not null as has_hindsight_trap,
        questions.relpos,
        questions.relpos_band,
        cases.n_reference_events,
        cases.narrative_chars,
        cast(parts.n_answers as integer) as n_answers,
        cast(parts.n_valid_answers as integer) as n_valid_answers,
        {%- for metric in answer_metrics + pair_metrics %}
        cast(coalesce(parts.{{ metric }}, 0) as double) as {{ metric }}_sum,
        cast(case when parts.{{ metric }} is not null then 1 else 0 end as integer) as {{ metric }}_n,
        cast(case when parts.{{ metric }} is not null and parts.is_valid then 1 else 0 end as integer) as {{ metric }}_valid,
        {%- endfor %}
        parts.scored_at
    from (select * from answers union all select * from pairs) as parts
    inner join questions on questions.question_id = parts.question_id
    left join cases on cases.cohort = questions.cohort and cases.case_id = questions.case_id
)

select * from final
