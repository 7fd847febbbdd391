-- One row per HindsightBench reply that counts: a release's replies come from each model's latest
-- release load (as its cells do); the runner's replies all count, and of several replies to one
-- call position (model x kind x arm x date x replicate x sample x probe set x temperature) a complete one beats a truncated
-- one, then the latest wins. A reply that ended on the token limit or is empty is `is_truncated`.
--
-- A table, incremental by model (delete+insert): every window here is per model, so a build ranks
-- again only the models a load since the last build brought replies for (load ids only grow); the
-- checks and the models that read the replies then scan a table, not these windows over every
-- reply's text. (A table on Spark, rebuilt every build: Spark has no delete+insert.)
-- The incremental pattern (stored marks and fingerprint, changed keys, the same SQL over them,
-- replaced whole): docs/architecture.md#the-incremental-pattern.
{{ config(materialized=('table' if target.type == 'spark' else 'incremental'), unique_key='model_key',
          incremental_strategy='delete+insert', on_schema_change='fail') }}
with source as (
    select
        *,
        coalesce(finish_reason in {{ "('" ~ var('hb_truncated_finish_reasons') | join("', '") ~ "')" }}, false)
            or coalesce(trim(reply_text), '') = '' as is_truncated,
        -- (a window takes no FILTER on Spark)
        load_id = max(case when source = 'release' then load_id end) over (partition by model_key) as is_current_release
    from {{ source('raw', 'hb_responses') }}
    {%- if is_incremental() %}
    where model_key in (
        select model_key from {{ source('raw', 'hb_responses') }}
        where load_id > (select coalesce(max(load_id), -1) from {{ this }})
    )
    {%- endif %}
),

ranked as (
    select
        *,
        row_number() over (
            partition by model_key, kind, coalesce(arm, ''), decision_date, coalesce(replicate, 0), coalesce(sample, 0),
                coalesce(probe_set, 'protocol'), coalesce(temperature, -1)
            order by is_truncated, source = 'runner' desc, received_at desc, load_id desc
        ) as position_rank
    from source
    where source = 'runner' or is_current_release
)

select
    model_key, source, kind, arm, decision_date, replicate, coalesce(sample, 0) as sample,
    request_id, call_id, reply_text, finish_reason, is_truncated, load_id, received_at,
    coalesce(probe_set, 'protocol') as probe_set, temperature
from ranked
where position_rank = 1
