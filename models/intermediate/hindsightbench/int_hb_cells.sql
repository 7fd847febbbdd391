-- One row per arm cell the audit counts (model x arm x replicate x date). Where a whole reply is
-- kept (a release's 04_raw_response.txt, or a reply asked here) its parse by the model's parser
-- version decides the cell (the registry's, else the newest), even beside a stale 99_parse_error.txt;
-- a release cell without a reply keeps the release's own files. A truncated reply leaves no cell
-- (as in the release, where it left no cell directory).
with parses as (
    select * from {{ ref('int_hb_reply_parses') }}
    where kind = 'arm' and not is_truncated
),

registry as (
    select model_key, parser_version from {{ ref('stg_raw__hb_registry') }}
),

replied as (
    select parses.*
    from parses
    left join registry on registry.model_key = parses.model_key
    where parses.parser_version = coalesce(registry.parser_version, (select max(all_parses.parser_version) from parses as all_parses))
),

files_only as (
    select release_cells.*
    from {{ ref('stg_raw__hb_cells') }} as release_cells
    where not exists (
        select 1 from replied
        where replied.model_key = release_cells.model_key and replied.arm = release_cells.arm
            and replied.replicate = release_cells.rep and replied.decision_date = release_cells.decision_date
    )
),

final as (
    select
        model_key, arm, replicate as rep, decision_date,
        case parse_status when 'ok' then 'sketches' else 'parse_error' end as cell_status,
        valid_count, invalid_count, directions,
        case source when 'runner' then 'runner' else 'release_reply' end as cell_source,
        parser_version
    from replied
    union all
    select
        model_key, arm, rep, decision_date, cell_status, valid_count, invalid_count,
        null as directions, 'release_files' as cell_source, null as parser_version
    from files_only
)

select * from final
