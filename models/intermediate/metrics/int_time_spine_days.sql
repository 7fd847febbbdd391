-- One row per day from 2020 to 2040: the time spine MetricFlow requires of a project with a
-- semantic layer (its metrics are over no time here: scored_at is only the measures' time dimension).
{{ config(materialized='table') }}
with days as (
    {%- if target.type == 'spark' %}
    select explode(sequence(to_date('2020-01-01'), to_date('2040-12-31'), interval 1 day)) as date_day
    {%- else %}
    select cast(range as date) as date_day
    from range(date '2020-01-01', date '2041-01-01', interval 1 day)
    {%- endif %}
),

final as (
    select cast(date_day as date) as date_day from days
)

select * from final
