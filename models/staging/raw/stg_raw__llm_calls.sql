-- One row per call the runners made to a model: its accounting (who was asked, with which
-- settings, how many tokens, how long, how it ended), without the reply's text.
with source as (
    select * from {{ source('raw', 'llm_calls') }}
),

final as (
    select
        call_id,
        purpose,
        target_id,
        provider,
        model,
        base_url_host,
        reported_model,
        sampling_profile,
        sample_index,
        temperature,
        max_tokens,
        cast(settings_sent as {{ dbt.type_string() }}) as settings_sent,
        prompt_variant,
        warning_position,
        prompt_template_version,
        parse_status,
        parser_version,
        finish_reason,
        input_tokens,
        output_tokens,
        latency_ms,
        started_at,
        finished_at,
        status as call_status,
        error,
        batch_key
    from source
)

select * from final
