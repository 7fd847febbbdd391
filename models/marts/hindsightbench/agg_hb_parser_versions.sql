-- One row per model x sketch parser version: the disclosure the paper asks for (§7: parser version
-- is part of a row's contract). The four arms' cells (not the W72 control) as each version reads the replies (cells without a reply keep
-- the release's files under every version), VALID under it, and the LAP answers the permissive and
-- the strict reading leave invalid. The row itself uses the registry's version (agg_hb_audit_rows).
with parses as (
    select * from {{ ref('int_hb_reply_parses') }}
),

replied as (
    select
        model_key,
        parser_version,
        count(*) filter (where not is_truncated) as replied_cells,
        count(*) filter (where parse_status = 'parse_error') as parse_error_cells,
        count(*) filter (where is_truncated) as truncated_replies,
        coalesce(sum(valid_count), 0) as valid_sketches
    from parses
    where kind = 'arm' and arm != 'W72'
    group by model_key, parser_version
),

files_only as (
    select model_key, count(*) as cells, coalesce(sum(valid_count) filter (where cell_status = 'sketches'), 0) as valid_sketches
    from {{ ref('int_hb_cells') }}
    where cell_source = 'release_files' and arm != 'W72'
    group by model_key
),

lap as (
    select
        model_key,
        count(*) filter (where lap_answer = 'invalid') as lap_invalid_permissive,
        count(*) filter (where lap_answer_strict = 'invalid') as lap_invalid_strict
    from parses
    where kind = 'lap' and parser_version = (select max(newest.parser_version) from parses as newest)
    group by model_key
),

final as (
    select
        replied.model_key,
        replied.parser_version,
        cast(replied.replied_cells + coalesce(files_only.cells, 0) as integer) as cells,
        cast(replied.parse_error_cells as integer) as parse_error_cells,
        cast(replied.truncated_replies as integer) as truncated_replies,
        cast(replied.valid_sketches + coalesce(files_only.valid_sketches, 0) as double)
            / (8 * (replied.replied_cells + coalesce(files_only.cells, 0))) as valid_sketch_rate,
        cast(coalesce(lap.lap_invalid_permissive, 0) as integer) as lap_invalid_permissive,
        cast(coalesce(lap.lap_invalid_strict, 0) as integer) as lap_invalid_strict
    from replied
    left join files_only on files_only.model_key = replied.model_key
    left join lap on lap.model_key = replied.model_key
)

select * from final
