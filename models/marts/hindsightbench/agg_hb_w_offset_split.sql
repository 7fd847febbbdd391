-- One row per audited model x displacement family of the W transplant map x baseline: the map
-- fake(PRE[i]) = PRE[(i + hb_transplant_shift) mod 240] moves the first 240 - shift dates forward by
-- `shift` months (fwd66) and the rest back by 240 - shift (bwd174). E3 restricted to each family:
-- both labelings keep only the dates sourced from the family's cells (true dates in the family, fake
-- dates in its image). Baseline `calm` keeps the row's calm window, and is not computable where a
-- labeling has no calm date (bwd174: the calm years lie outside it) - NULL with the reason, never
-- imputed; baseline `rest` (a post-hoc supplement) compares crisis with every other family date under
-- the same labeling. Family `all` with baseline `calm` is the row's E3. Point estimates.
with dates as (
    select decision_date, date_index, fake_date, date_window
    from {{ ref('int_hb_dates') }}
    where period = 'pre'
),

universe as (
    select count(*) as n_pre from dates
),

families as (
    select
        dates.decision_date as true_date,
        dates.fake_date,
        case when dates.date_index < universe.n_pre - {{ var('hb_transplant_shift') }}
            then 'fwd' || {{ var('hb_transplant_shift') }}
            else 'bwd' || (universe.n_pre - {{ var('hb_transplant_shift') }}) end as family,
        case when dates.date_index < universe.n_pre - {{ var('hb_transplant_shift') }}
            then {{ var('hb_transplant_shift') }}
            else {{ var('hb_transplant_shift') }} - universe.n_pre end as offset_months
    from dates
    cross join universe
),

members as (
    select family, offset_months, 'true' as labeling, true_date as decision_date from families
    union all
    select family, offset_months, 'fake' as labeling, fake_date as decision_date from families
    union all
    select 'all' as family, null as offset_months, 'true' as labeling, true_date as decision_date from families
    union all
    select 'all' as family, null as offset_months, 'fake' as labeling, fake_date as decision_date from families
),

labeled as (
    select
        members.family,
        members.offset_months,
        members.labeling,
        members.decision_date,
        coalesce(dates.date_window = 'crisis', false) as is_crisis,
        coalesce(dates.date_window = 'calm', false) as is_calm
    from members
    inner join dates on dates.decision_date = members.decision_date
),

windows as (
    select family, offset_months, labeling, decision_date, 'calm' as baseline, is_crisis
    from labeled
    where is_crisis or is_calm
    union all
    select family, offset_months, labeling, decision_date, 'rest' as baseline, is_crisis
    from labeled
),

design as (
    select
        family, baseline, labeling,
        count(*) filter (where is_crisis) as n_crisis,
        count(*) filter (where not is_crisis) as n_baseline
    from windows
    group by all
),

counts as (
    select model_key, arm, decision_date, n_sketches, n_bearish
    from {{ ref('int_hb_sketch_counts') }}
    where arm in ('W', 'W_fake')
),

shares as (
    select
        counts.model_key,
        windows.family,
        any_value(windows.offset_months) as offset_months,
        windows.baseline,
        windows.labeling,
        sum(counts.n_bearish) filter (where windows.is_crisis)
            / nullif(sum(counts.n_sketches) filter (where windows.is_crisis), 0) as crisis_share,
        sum(counts.n_bearish) filter (where not windows.is_crisis)
            / nullif(sum(counts.n_sketches) filter (where not windows.is_crisis), 0) as baseline_share
    from windows
    inner join counts
        on counts.decision_date = windows.decision_date
        and counts.arm = case windows.labeling when 'true' then 'W' else 'W_fake' end
    group by all
),

paired as (
    select
        true_side.model_key,
        true_side.family,
        true_side.offset_months,
        true_side.baseline,
        fake_side.crisis_share - fake_side.baseline_share as gap_fake,
        true_side.crisis_share - true_side.baseline_share as gap_true
    from shares as true_side
    inner join shares as fake_side
        on fake_side.model_key = true_side.model_key and fake_side.family = true_side.family
        and fake_side.baseline = true_side.baseline and fake_side.labeling = 'fake'
    where true_side.labeling = 'true'
),

registry as (
    select model_key, row_version from {{ ref('stg_raw__hb_registry') }}
),

final as (
    select
        paired.model_key,
        registry.row_version,
        paired.family,
        cast(paired.offset_months as integer) as offset_months,
        paired.baseline,
        cast(design_true.n_crisis as integer) as n_crisis_true,
        cast(design_true.n_baseline as integer) as n_baseline_true,
        cast(design_fake.n_crisis as integer) as n_crisis_fake,
        cast(design_fake.n_baseline as integer) as n_baseline_fake,
        paired.gap_fake,
        paired.gap_true,
        paired.gap_fake - paired.gap_true as e3_estimate,
        paired.gap_fake - paired.gap_true is not null as computable,
        case
            when least(design_true.n_crisis, design_true.n_baseline, design_fake.n_crisis, design_fake.n_baseline) = 0
                then 'not computable: a window is empty by construction (true crisis ' || design_true.n_crisis
                    || ', true ' || paired.baseline || ' ' || design_true.n_baseline || ', fake crisis '
                    || design_fake.n_crisis || ', fake ' || paired.baseline || ' ' || design_fake.n_baseline || '); never imputed'
            when paired.gap_fake is null or paired.gap_true is null
                then 'not computable: a window has no W sketch'
        end as not_computable_reason
    from paired
    inner join design as design_true
        on design_true.family = paired.family and design_true.baseline = paired.baseline and design_true.labeling = 'true'
    inner join design as design_fake
        on design_fake.family = paired.family and design_fake.baseline = paired.baseline and design_fake.labeling = 'fake'
    left join registry on registry.model_key = paired.model_key
)

select * from final
