-- PLACEHOLDER (being written)
select cast(null as string) as design_id, cast(null as string) as cohort, cast(null as string) as item,
    cast(null as string) as judge_model, cast(null as string) as statistic, cast(null as double) as estimate,
    cast(null as double) as ci_low, cast(null as double) as ci_high, cast(null as bigint) as n_questions,
    cast(null as bigint) as n_cases, cast(null as bigint) as n_assessments, cast(null as bigint) as n_finite_replicates,
    cast(null as bigint) as bootstrap_replicates
where false
