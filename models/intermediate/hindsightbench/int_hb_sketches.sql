-- One row per valid sketch of a counted cell: the parsed directions of a replied cell, or the
-- release's 01_sketches_valid.json of a cell without a reply. Direction '+' bullish, '-' bearish.
with cells as (
    select * from {{ ref('int_hb_cells') }}
),

parsed as (
    select cells.model_key, cells.arm, cells.rep, cells.decision_date,
        cast(items.sketch_index - 1 as integer) as sketch_index, items.direction
    from cells
    {{ lateral_items(split_text('cells.directions', "''"), 'direction', 'sketch_index', 'items') }}
    where cells.cell_source != 'release_files' and cells.directions != ''
),

from_files as (
    select sketches.model_key, sketches.arm, sketches.rep, sketches.decision_date, sketches.sketch_index, sketches.direction
    from {{ ref('stg_raw__hb_sketches') }} as sketches
    where exists (
        select 1 from cells
        where cells.model_key = sketches.model_key and cells.arm = sketches.arm and cells.rep = sketches.rep
            and cells.decision_date = sketches.decision_date and cells.cell_source = 'release_files'
    )
)

select * from parsed
union all
select * from from_files
