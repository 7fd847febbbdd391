-- One row per serving pair the registry declares (a row's serving_variant_of) x endpoint: both
-- configurations' estimates and 95% CIs and the BM-2a verdict (STABLE, UNSTABLE, UNDERPOWERED) with
-- its reason, as `hindsight audit compare` prints it (int_hb_serving_stability).
with pairs as (
    select * from {{ ref('int_hb_serving_stability') }}
),

registry as (
    select model_key, row_version from {{ ref('stg_raw__hb_registry') }}
),

final as (
    select
        pairs.reference_key,
        reference.row_version as reference_row_version,
        pairs.variant_key,
        variant.row_version as variant_row_version,
        pairs.endpoint,
        pairs.reference_estimate,
        pairs.reference_ci_low,
        pairs.reference_ci_high,
        pairs.variant_estimate,
        pairs.variant_ci_low,
        pairs.variant_ci_high,
        pairs.variant_estimate - pairs.reference_estimate as shift,
        pairs.verdict,
        pairs.reason
    from pairs
    left join registry as reference on reference.model_key = pairs.reference_key
    left join registry as variant on variant.model_key = pairs.variant_key
)

select * from final
