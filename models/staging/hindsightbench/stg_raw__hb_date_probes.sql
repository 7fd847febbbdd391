-- One row per date-probe line of each model's latest load, with the estimated year-month parsed
-- when it is a `YYYY-MM` (empty, shorter or non-integer estimates stay unparsed).
with source as (
    select *, load_id = max(load_id) over (partition by model_key) as is_current
    from {{ source('raw', 'hb_date_probes') }}
),

final as (
    select
        model_key,
        line_number,
        decision_date,
        estimated_date,
        case when regexp_matches(coalesce(estimated_date, ''), '^\d{4}-\d{1,2}')
            then cast(left(estimated_date, 4) as integer) end as estimated_year,
        case when regexp_matches(coalesce(estimated_date, ''), '^\d{4}-\d{1,2}')
            then try_cast(split_part(estimated_date, '-', 2) as integer) end as estimated_month
    from source
    where is_current
)

select * from final
