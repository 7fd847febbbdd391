-- One row per metric of the paper (§3.7): its label, definition and reading,
-- so BI tools and the report name metrics in the paper's terms.
with metrics as (
    select * from {{ ref('metrics') }}
),

final as (
    select
        cast(metric as varchar) as metric,
        cast(visibility as varchar) as visibilities,
        cast(label as varchar) as label,
        cast(definition as varchar) as definition,
        cast(positive_means as varchar) as positive_means
    from metrics
)

select * from final
