-- One row per model x probe set x temperature x date x rep id (a release's `rep`, a sample asked
-- here): its lines and how many answered up or down, the unit the rep jackknife and the LAP series
-- of the sensitivity check (int_hb_lap_sensitivity) resample and pool.
with answers as (
    select * from {{ ref('int_hb_lap_answers') }}
)

select
    model_key,
    probe_set,
    temperature,
    decision_date,
    sample as rep,
    count(*) as n_lines,
    count(*) filter (where answer in ('up', 'down')) as n_updown
from answers
group by all
