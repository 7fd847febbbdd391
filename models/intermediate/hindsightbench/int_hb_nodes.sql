-- One row per HindsightBench decision node, as the release builds them: the 240 pre-cutoff V1
-- requests verbatim, and one post-cutoff node per snapshot date made from the var
-- hb_post_template_date request (its date line and decision_date_used set to the node's date, its
-- snapshot lines filled from the snapshot; lines rejoined with newlines). Each node carries its
-- transplant date for W (PRE[(i + hb_transplant_shift) mod 240] before the cutoff; after it, crisis
-- and calm anchors alternating, even index crisis), for the W72 control arm (shift hb_control_shift,
-- pre only) and the LAP window end (the trading day hb_lap_sessions sessions on, counting t when it
-- trades, else t + hb_lap_fallback_days).
with pre as (
    select
        decision_date,
        system_text,
        user_text
    from {{ ref('stg_raw__hb_panel_prompts') }}
),

template_lines as (
    select lines.line, lines.line_no, pre.system_text
    from pre
    {{ lateral_items(hb_split_lines('pre.user_text'), 'line', 'line_no', 'lines') }}
    where pre.decision_date = '{{ var("hb_post_template_date") }}'
),

snapshots as (
    select * from {{ ref('stg_raw__hb_postcutoff_snapshots') }}
),

post_dates as (
    select decision_date, cast(row_number() over (order by decision_date) - 1 as integer) as post_index
    from (select distinct decision_date from snapshots)
),

post_lines as (
    select
        post_dates.decision_date,
        template_lines.line_no,
        template_lines.system_text,
        case
            when contains(template_lines.line, 'Decision time point: {{ var("hb_post_template_date") }}')
                then replace(template_lines.line, '{{ var("hb_post_template_date") }}', post_dates.decision_date)
            when contains(template_lines.line, 'decision_date_used:')
                then left(template_lines.line, instr(template_lines.line, 'decision_date_used:') - 1)
                    || 'decision_date_used: ' || post_dates.decision_date
            when {{ regex_search('template_lines.line', hb_snapshot_pattern()) }}
                then regexp_extract(template_lines.line, {{ hb_snapshot_pattern() }}, 1) || '- ' || snapshots.series_id
                    || ': vintage_date=' || snapshots.vintage_date || ', vintage_value=' || snapshots.vintage_value
                    || ', revised_value=' || snapshots.revised_value
            else template_lines.line
        end as line
    from post_dates
    cross join template_lines
    left join snapshots
        on snapshots.decision_date = post_dates.decision_date
        and snapshots.series_id = regexp_extract(template_lines.line, {{ hb_snapshot_pattern() }}, 2)
),

post as (
    select
        decision_date,
        any_value(system_text) as system_text,
        {{ ordered_string_agg('line', 'chr(10)', 'line_no') }} as user_text
    from post_lines
    group by decision_date
),

crisis as (
    select decision_date, cast(row_number() over (order by position) - 1 as integer) as crisis_index
    from {{ ref('hb_date_windows') }}
    where date_window = 'crisis'
),

calm_anchors as (
    select anchor as decision_date, cast(anchor_position - 1 as integer) as anchor_index
    from {{ enumerated_values(var('hb_post_calm_anchors'), 'anchor', 'anchor_position') }}
        as anchors
),

nodes as (
    select
        pre.decision_date,
        'pre' as period,
        pre.system_text,
        pre.user_text,
        -- the transplant map has one home: the audit's date table
        dates.fake_date,
        dates.control_fake_date
    from pre
    left join {{ ref('int_hb_dates') }} as dates on dates.decision_date = pre.decision_date
    union all
    select
        post.decision_date,
        'post' as period,
        post.system_text,
        post.user_text,
        case when post_dates.post_index % 2 = 0 then crisis.decision_date else calm_anchors.decision_date end as fake_date,
        null as control_fake_date
    from post
    inner join post_dates on post_dates.decision_date = post.decision_date
    left join crisis on crisis.crisis_index = {{ int_div('post_dates.post_index', 2) }} % (select count(*) from crisis)
    left join calm_anchors
        on calm_anchors.anchor_index = {{ int_div('post_dates.post_index', 2) }} % (select count(*) from calm_anchors)
),

-- the trading days numbered once; a node's sessions are counted from its first trading day on or
-- after it (numbering the days again per node was a window over nodes x days: 7 s for 240 nodes)
spx as (
    select trading_date, row_number() over (order by trading_date) as trading_index
    from {{ ref('stg_raw__hb_spx') }}
),

trading_days_count as (
    select count(*) as n_days from spx
),

first_sessions as (
    select nodes.decision_date, min(spx.trading_index) as first_index
    from nodes
    left join spx on spx.trading_date >= nodes.decision_date
    group by nodes.decision_date
),

sessions as (
    select
        first_sessions.decision_date,
        coalesce(trading_days_count.n_days - first_sessions.first_index + 1, 0) as sessions_on_or_after,
        session_end.trading_date as session_end
    from first_sessions
    cross join trading_days_count
    left join spx as session_end
        on session_end.trading_index = first_sessions.first_index + {{ var('hb_lap_sessions') }}
),

final as (
    select
        nodes.*,
        case when sessions.sessions_on_or_after > {{ var('hb_lap_sessions') }} then sessions.session_end
             else cast(cast(cast(nodes.decision_date as date) + interval {{ var('hb_lap_fallback_days') }} day as date) as string)
        end as lap_window_end
    from nodes
    inner join sessions on sessions.decision_date = nodes.decision_date
)

select * from final
