-- One row per audited model: its latest row version from the release's registry (seed hb_registry)
-- or from a registration by `hindsight audit plan|run` (raw.hb_registry), whichever is later; an
-- audit registration may name the row it is another serving configuration of (serving_variant_of).
with release as (
    select
        model_key, row_version, display, cast(generation as string) as generation, provider,
        cast(null as string) as model_spec, tier, sampling, serving_quantization, thinking_regime, retrieval,
        parser_version, vendor_cutoff, vendor_cutoff_read_on, p1_mode as published_p1_mode,
        published_lap_at_chance, published_delta_gate, rec_mode as published_rec_mode, 'release' as registered_by,
        cast(null as string) as serving_variant_of
    from {{ ref('hb_registry') }}
),

registered as (
    select
        model_key, row_version, display, generation, provider, model_spec, tier, sampling, serving_quantization,
        thinking_regime, retrieval, parser_version, vendor_cutoff, vendor_cutoff_read_on,
        null as published_p1_mode, null as published_lap_at_chance, null as published_delta_gate,
        null as published_rec_mode, 'audit' as registered_by, serving_variant_of
    from {{ source('raw', 'hb_registry') }}
),

unioned as (
    select * from release
    union all
    select * from registered
)

select *
from unioned
qualify row_number() over (partition by model_key order by row_version desc, registered_by = 'audit' desc) = 1
