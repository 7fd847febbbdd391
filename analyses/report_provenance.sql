-- Report, provenance footer: the build and the answers' providers, prompt template and parser versions.
select
    build.built_at, build.dbt_version, build.dbt_invocation_id, build.reference_source,
    build.bootstrap_replicates, build.bootstrap_seed, build.ci_method, build.hb_bootstrap_draws,
    build.answer_parser_version as build_answer_parser_version, build.warehouse_version,
    answers.cohort, answers.model, answers.prompt_variant, answers.provider, answers.base_url_host,
    answers.prompt_template_version, answers.response_parser_version, answers.answer_parser_version,
    answers.reported_models, answers.n_answers, answers.n_invalid
from {{ ref('dim_build') }} as build
left join {{ ref('agg_answer_provenance') }} as answers on true
order by answers.cohort, answers.model, answers.prompt_variant
