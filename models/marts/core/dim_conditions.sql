-- One row per input condition of the paired clinical benchmark (paper §3.6 and
-- Appendix B): what the answering model reads, and whether masking is strict
-- (no original narrative, which would leak the outcome, in the masked input).
with conditions as (
    select * from {{ ref('conditions') }}
),

final as (
    select
        cast(condition as string) as condition,
        cast(label as string) as label,
        cast(narrative_source as string) as narrative_source,
        cast(tts_source as string) as tts_source,
        cast(is_paired as boolean) as is_paired,
        cast(is_paired and coalesce(narrative_source, '') <> 'original' as boolean) as is_strict_masking
    from conditions
)

select * from final
