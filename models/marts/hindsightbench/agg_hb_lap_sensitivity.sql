-- One row per audited model x LAP series (temperature, samples) x theta: the effective cutoff, its
-- displacement in months from the reference cell (the protocol's series at var hb_lap_threshold),
-- delta and its gate per series, and on the reference series the rep jackknife's cutoff span and
-- agreement (int_hb_lap_sensitivity).
with sensitivity as (
    select {{ star_except(['input_fingerprint', 'computed_at']) }} from {{ ref('int_hb_lap_sensitivity') }}
),

registry as (
    select model_key, row_version from {{ ref('stg_raw__hb_registry') }}
),

final as (
    select
        sensitivity.model_key,
        registry.row_version,
        {{ star_except(['model_key'], 'sensitivity') }}
    from sensitivity
    left join registry on registry.model_key = sensitivity.model_key
)

select * from final
