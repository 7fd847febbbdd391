-- One row per replayed model answer, as loaded (model name verbatim).
{#- what the runners record in an answer's payload (NULL for replayed answers), parsed once per row #}
{%- set recorded = ['sample_index', 'provider', 'base_url_host', 'reported_model', 'call_id', 'finish_reason',
                    'response_parse_status', 'response_parser_version', 'prompt_template_version'] %}
with source as (
    select * from {{ source('raw', 'responses') }}
),

parsed as (
    select
        *,
        {{ json_texts('payload', recorded) }} as recorded
    from source
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
        coalesce(cast({{ json_texts_item('recorded', recorded, 'sample_index') }} as integer), 0) as sample_index,
        answer,
        evidence,
        -- set by the runners; NULL for replayed answers
        {{ json_texts_item('recorded', recorded, 'provider') }} as provider,
        {{ json_texts_item('recorded', recorded, 'base_url_host') }} as base_url_host,
        {{ json_texts_item('recorded', recorded, 'reported_model') }} as reported_model,
        {{ json_texts_item('recorded', recorded, 'call_id') }} as call_id,
        {{ json_texts_item('recorded', recorded, 'finish_reason') }} as finish_reason,
        coalesce({{ json_texts_item('recorded', recorded, 'response_parse_status') }}, 'replayed') as response_parse_status,
        {{ json_texts_item('recorded', recorded, 'response_parser_version') }} as response_parser_version,
        {{ json_texts_item('recorded', recorded, 'prompt_template_version') }} as prompt_template_version,
        source_file,
        line_number,
        load_id,
        loaded_at
    from parsed
)

select * from final
