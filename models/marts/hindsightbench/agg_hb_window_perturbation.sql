-- One row per audited model x window perturbation x endpoint (E2, E3): the estimate over the perturbed
-- crisis and calm windows with the row's own gap and bootstrap (int_hb_window_perturbation), whether
-- it keeps the sign of the row's estimate and, where a CI is computed, whether it still excludes zero.
-- perturbation = 'none' is the row itself (equal to agg_hb_audit_rows bit for bit).
with perturbations as (
    select * from {{ ref('int_hb_window_perturbation') }}
),

registry as (
    select model_key, row_version from {{ ref('stg_raw__hb_registry') }}
),

final as (
    select
        perturbations.model_key,
        registry.row_version,
        perturbations.perturbation,
        perturbations.family,
        perturbations.position,
        perturbations.endpoint,
        perturbations.estimate,
        perturbations.ci_low,
        perturbations.ci_high,
        perturbations.finite_replicates,
        perturbations.gap_a,
        perturbations.gap_b,
        perturbations.n_crisis,
        perturbations.n_calm,
        perturbations.sign_held,
        perturbations.ci_excludes_zero,
        perturbations.excluded_reason
    from perturbations
    left join registry on registry.model_key = perturbations.model_key
)

select * from final
