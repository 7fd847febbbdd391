-- One row per model x probed date of the protocol's probes: LAP_d = (up + down) / all lines,
-- UD_d = (up - down) / all lines, with unknown, invalid and duplicate lines all counted.
with probes as (
    select * from {{ ref('int_hb_lap_answers') }}
    where probe_set = 'protocol'
)

select
    model_key,
    decision_date,
    count(*) as n_lines,
    count(*) filter (where answer = 'up') as n_up,
    count(*) filter (where answer = 'down') as n_down,
    cast(count(*) filter (where answer in ('up', 'down')) as double) / count(*) as lap,
    cast(count(*) filter (where answer = 'up') - count(*) filter (where answer = 'down') as double) / count(*) as ud
from probes
group by all
