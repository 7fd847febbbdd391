-- One row per HindsightBench call a tier can ask (hindsightbench.md §3, HINDSIGHTBENCH_SPEC.md
-- "Collection"): arm R/D/M/W x decision date x replicate, REC per date, LAP per date x sample, and
-- the optional month-preserving control arm W72 (pre dates; no tier asks it unless requested).
-- Requests do not depend on the audited model. Tiers: smoke = the var hb_smoke_dates x 4 arms,
-- replicate 1; reduced = 4 arms x replicate 1 on the window dates (crisis, calm, post), REC on every
-- date, LAP's first half of the samples; full-1rep = 4 arms x replicate 1, REC, every LAP sample;
-- full = every replicate. Each kind carries its sampling profile (var sampling_profiles).
-- lap-sensitivity (probe_set lap_sensitivity, not a row's tier): the LAP re-probes of the robustness
-- check (hindsightbench.md §7.2) - every date at each var hb_lap_sensitivity_temperatures with the
-- protocol's samples, and as many samples again (hb_lap_samples ... 2 x hb_lap_samples - 1) at the
-- profile's own temperature.
with nodes as (
    select * from {{ ref('int_hb_nodes') }}
),

prompts as (
    select * from {{ ref('int_hb_arm_prompts') }}
),

windows as (
    select decision_date from {{ ref('hb_date_windows') }}
    union
    select decision_date from nodes where period = 'post'
),

replicates as (
    select replicates.replicate_index + 1 as replicate from {{ range_relation(var('hb_arm_replicates'), 'replicate_index') }} as replicates
),

lap_samples as (
    select lap_samples.sample from {{ range_relation(var('hb_lap_samples'), 'sample') }} as lap_samples
),

reprobe_sets as (
    -- (temperature or NULL = the profile's, sample): the re-probes of --tier lap-sensitivity
    select cast(temperatures.temperature as double) as temperature, lap_samples.sample
    from {{ enumerated_values(var('hb_lap_sensitivity_temperatures'), 'temperature', 'temperature_position') }} as temperatures
    cross join lap_samples
    union all
    select null as temperature, more.sample_offset + {{ var('hb_lap_samples') }} as sample
    from {{ range_relation(var('hb_lap_samples'), 'sample_offset') }} as more
),

lap_profile as {{ sampling_profile_relation('hb_lap') }},

rec_snapshots as (
    -- the masked text's 8 `asof` lines, stripped, as the REC prompt's snapshot
    select
        prompts.decision_date,
        {{ ordered_string_agg(regex_replace_all('lines.line', "'^\s+|\s+$'", "''"), 'chr(10)', 'lines.line_no') }} as snapshot,
        count(*) as n_lines
    from prompts
    {{ lateral_items(hb_split_lines('prompts.user_text'), 'line', 'line_no', 'lines') }}
    where prompts.arm = 'M' and {{ regex_search('lines.line', "'^\s*- [A-Z0-9]+: asof=t-\d+mo, value='") }}
    group by prompts.decision_date
),

arm_calls as (
    select
        'hb:arm:' || prompts.arm || ':' || prompts.decision_date || ':r' || replicates.replicate as request_id,
        'arm' as kind,
        prompts.arm,
        prompts.decision_date,
        nodes.period,
        replicates.replicate,
        0 as sample,
        prompts.asserted_date,
        nodes.system_text,
        prompts.user_text,
        prompts.arm != 'W72' and replicates.replicate = 1
            and prompts.decision_date in ({{ "'" ~ var('hb_smoke_dates') | join("', '") ~ "'" }}) as in_smoke,
        prompts.arm != 'W72' and replicates.replicate = 1
            and prompts.decision_date in (select windows.decision_date from windows) as in_reduced,
        prompts.arm != 'W72' and replicates.replicate = 1 as in_full_1rep,
        prompts.arm != 'W72' as in_full,
        prompts.arm = 'W72' as in_control,
        false as in_lap_sensitivity,
        'protocol' as probe_set,
        cast(null as double) as temperature_override
    from prompts
    inner join nodes on nodes.decision_date = prompts.decision_date
    cross join replicates
),

rec_calls as (
    select
        'hb:rec:' || nodes.decision_date as request_id,
        'rec' as kind,
        null as arm,
        nodes.decision_date,
        nodes.period,
        null as replicate,
        0 as sample,
        null as asserted_date,
        {{ hb_rec_system() }} as system_text,
        {{ hb_rec_user('rec_snapshots.snapshot') }} as user_text,
        false as in_smoke,
        true as in_reduced,
        true as in_full_1rep,
        true as in_full,
        false as in_control,
        false as in_lap_sensitivity,
        'protocol' as probe_set,
        cast(null as double) as temperature_override
    from nodes
    inner join rec_snapshots on rec_snapshots.decision_date = nodes.decision_date
),

lap_sets as (
    -- the protocol's samples, and the re-probes of --tier lap-sensitivity
    select 'protocol' as probe_set, cast(null as double) as temperature, sample from lap_samples
    union all
    select 'lap_sensitivity' as probe_set, coalesce(reprobe_sets.temperature, lap_profile.temperature) as temperature, reprobe_sets.sample
    from reprobe_sets
    cross join lap_profile
),

lap_calls as (
    select
        case when lap_sets.probe_set = 'protocol'
            then 'hb:lap:' || nodes.decision_date || ':s' || lap_sets.sample
            else 'hb:lap@' || lap_sets.temperature || ':' || nodes.decision_date || ':s' || lap_sets.sample
        end as request_id,
        'lap' as kind,
        null as arm,
        nodes.decision_date,
        nodes.period,
        null as replicate,
        lap_sets.sample,
        nodes.decision_date as asserted_date,
        {{ hb_lap_system() }} as system_text,
        {{ hb_lap_user('nodes.decision_date', 'nodes.lap_window_end') }} as user_text,
        false as in_smoke,
        lap_sets.probe_set = 'protocol' and lap_sets.sample < {{ int_div(var('hb_lap_samples'), 2) }} as in_reduced,
        lap_sets.probe_set = 'protocol' as in_full_1rep,
        lap_sets.probe_set = 'protocol' as in_full,
        false as in_control,
        lap_sets.probe_set = 'lap_sensitivity' as in_lap_sensitivity,
        lap_sets.probe_set,
        lap_sets.temperature as temperature_override
    from nodes
    cross join lap_sets
),

calls as (
    select * from arm_calls
    union all
    select * from rec_calls
    union all
    select * from lap_calls
),

final as (
    select
        calls.request_id,
        calls.kind,
        calls.arm,
        calls.decision_date,
        calls.period,
        cast(calls.replicate as integer) as replicate,
        cast(calls.sample as integer) as sample,
        calls.asserted_date,
        calls.system_text,
        calls.user_text,
        {{ sha256_hex("calls.user_text") }} as user_sha256,
        {{ sampling_profile_columns('profiles', 'calls.temperature_override') }},
        calls.in_smoke,
        calls.in_reduced,
        calls.in_full_1rep,
        calls.in_full,
        calls.in_control,
        calls.in_lap_sensitivity,
        calls.probe_set,
        '{{ var("hb_template_version") }}' as template_version
    from calls
    inner join {{ ref('sampling_profiles') }} as profiles
        on profiles.profile = case calls.kind
            when 'arm' then '{{ var("sampling_profiles")["hb_arm"] }}'
            when 'rec' then '{{ var("sampling_profiles")["hb_date_probe"] }}'
            else '{{ var("sampling_profiles")["hb_lap"] }}'
        end
)

select * from final
