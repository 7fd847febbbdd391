-- One row per decision node x arm: the user text each arm sends (hindsightbench.md §3, the release's
-- clean_context). R is the node's text verbatim. D, M, W and the W72 control drop the target-panel
-- summary and metadata lines and rewrite each snapshot line as `- SERIES: asof=t-Kmo, value=V`
-- (K = whole months from the vintage month to the decision month); D keeps the date line, M
-- replaces it with the undisclosed line, W and W72 state their transplant date. Lines rejoin with
-- newlines (no trailing newline). The fail-closed leak check is assert_hb_prompts_leak_nothing.
with nodes as (
    select * from {{ ref('int_hb_nodes') }}
),

arms as (
    select arm_values.arm from (values ('D'), ('M'), ('W'), ('W72')) as arm_values (arm)
),

lines as (
    select
        nodes.decision_date,
        nodes.fake_date,
        nodes.control_fake_date,
        lines.line,
        lines.line_no,
        regexp_extract(lines.line, {{ hb_snapshot_pattern() }}, 1) as snapshot_indent,
        regexp_extract(lines.line, {{ hb_snapshot_pattern() }}, 2) as snapshot_series,
        regexp_extract(lines.line, {{ hb_snapshot_pattern() }}, 3) as snapshot_month,
        regexp_extract(lines.line, {{ hb_snapshot_pattern() }}, 4) as snapshot_value
    from nodes
    {{ lateral_items(hb_split_lines('nodes.user_text'), 'line', 'line_no', 'lines') }}
),

rewritten as (
    select
        lines.decision_date,
        arms.arm,
        lines.line_no,
        case
            when {{ regex_search('lines.line', hb_date_line_pattern()) }} then
                case arms.arm
                    when 'D' then lines.line
                    when 'M' then regexp_extract(lines.line, '^(\s*)', 1)
                        || 'Decision time point: [undisclosed]. Only information contained in this snapshot is admissible as evidence.'
                    else regexp_extract(lines.line, '^(\s*)', 1) || 'Decision time point: '
                        || case arms.arm when 'W' then lines.fake_date else lines.control_fake_date end
                        || ' - only information available on or before this date is admissible as evidence.'
                end
            when {{ regex_search('lines.line', hb_dropped_line_pattern()) }} then null
            when {{ regex_search('lines.line', hb_snapshot_pattern()) }} then
                lines.snapshot_indent || '- ' || lines.snapshot_series || ': asof=t-'
                || cast((cast(left(lines.decision_date, 4) as integer) - cast(left(lines.snapshot_month, 4) as integer)) * 12
                    + cast(substr(lines.decision_date, 6, 2) as integer) - cast(right(lines.snapshot_month, 2) as integer) as string)
                || 'mo, value=' || {{ regex_replace_all('lines.snapshot_value', "'^\s+|\s+$'", "''") }}
            else lines.line
        end as line
    from lines
    cross join arms
    where arms.arm != 'W72' or lines.control_fake_date is not null
),

cleaned as (
    select decision_date, arm, {{ ordered_string_agg('line', 'chr(10)', 'line_no') }} as user_text
    from rewritten
    group by decision_date, arm
),

final as (
    select nodes.decision_date, 'R' as arm, nodes.user_text, nodes.decision_date as asserted_date
    from nodes
    union all
    select
        cleaned.decision_date,
        cleaned.arm,
        cleaned.user_text,
        case cleaned.arm when 'D' then nodes.decision_date when 'W' then nodes.fake_date when 'W72' then nodes.control_fake_date end
            as asserted_date
    from cleaned
    inner join nodes on nodes.decision_date = cleaned.decision_date
)

select * from final
