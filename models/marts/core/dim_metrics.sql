-- One row per metric of the paper (§3.7): its label, definition and reading,
-- so BI tools and the report name metrics in the paper's terms.
with metrics as (
    select * from {{ ref('metrics') }}
),

final as (
    select
        cast(metric as string) as metric,
        cast(visibility as string) as visibilities,
        cast(label as string) as label,
        cast(definition as string) as definition,
        cast(positive_means as string) as positive_means
    from metrics
)

select * from final
