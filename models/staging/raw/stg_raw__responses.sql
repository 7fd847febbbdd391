-- One row per replayed model answer, as loaded (model name verbatim).
with source as (
    select * from {{ source('raw', 'responses') }}
),

final as (
    select
        response_id,
        -- the integer twin of response_id: a raw row's load and line (unique, stable), what the big
        -- joins and the newest-answer aggregate run on
        cast(load_id as bigint) * {{ response_key_lines() }} + line_number as response_key,
        question_id,
        model,
        condition,
        visibility,
        prompt_variant,
        -- one sample of a request (runners' --samples); answers stored before samples existed are sample 0
        coalesce(cast({{ json_text('payload', 'sample_index') }} as integer), 0) as sample_index,
        answer,
        evidence,
        -- set by the runners; NULL for replayed answers
        {{ json_text('payload', 'provider') }} as provider,
        {{ json_text('payload', 'base_url_host') }} as base_url_host,
        {{ json_text('payload', 'reported_model') }} as reported_model,
        {{ json_text('payload', 'call_id') }} as call_id,
        {{ json_text('payload', 'finish_reason') }} as finish_reason,
        coalesce({{ json_text('payload', 'response_parse_status') }}, 'replayed') as response_parse_status,
        {{ json_text('payload', 'response_parser_version') }} as response_parser_version,
        {{ json_text('payload', 'prompt_template_version') }} as prompt_template_version,
        source_file,
        line_number,
        load_id,
        loaded_at
    from source
)

select * from final
