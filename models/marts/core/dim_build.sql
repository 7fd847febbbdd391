-- One row: the dbt invocation that last built the marts, and the project
-- settings every estimate depends on. The report's provenance footer reads it.
with settings as (
    select
        cast('{{ invocation_id }}' as string) as dbt_invocation_id,
        cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S") }}' as timestamp) as built_at,
        cast('{{ dbt_version }}' as string) as dbt_version,
        cast('{{ var("reference_source") }}' as string) as reference_source,
        cast({{ var('bootstrap_replicates') }} as integer) as bootstrap_replicates,
        cast({{ var('bootstrap_seed') }} as bigint) as bootstrap_seed,
        cast('{{ var("ci_method") }}' as string) as ci_method,
        cast('{{ var("hb_bootstrap_draws") }}' as string) as hb_bootstrap_draws,
        cast({{ answer_parser_version() }} as string) as answer_parser_version,
        -- the release of this project that built the marts (pyproject.toml; a test keeps the var equal)
        cast('{{ var("warehouse_version") }}' as string) as warehouse_version
)

select * from settings
