-- Every request kind the var `sampling_profiles` maps names a profile of that kind in
-- seeds/sampling_profiles.csv (otherwise its requests mart would be empty). One row per broken mapping.
with mapped as (
    {%- for kind, profile in var('sampling_profiles').items() %}
    select '{{ kind }}' as request_kind, '{{ profile }}' as profile
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
),

profiles as (
    select profile, request_kind from {{ ref('sampling_profiles') }}
),

final as (
    select mapped.request_kind, mapped.profile, profiles.request_kind as profile_kind
    from mapped
    left join profiles on profiles.profile = mapped.profile
    where profiles.request_kind is distinct from mapped.request_kind
)

select * from final
