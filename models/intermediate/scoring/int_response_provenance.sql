-- One row per stored answer (raw.responses): where it came from, as its runner recorded it in the
-- payload (provider, host, the model the provider reported, call, finish reason, how the reply was
-- parsed and with which prompt template) and where it was loaded from. fct_answers joins it by
-- response_key.
--
-- A table, not the staging view fct_answers read before: at 100x the paper's cases, reading 17.8 M
-- payloads' JSON in every publish of fct_answers took most of its 97 s (28 s from this table).
-- Incremental: a raw answer never changes once loaded, so a build adds the rows of the loads above
-- the stored mark, and computes every row again when this model or the staging view changed
-- (input_fingerprint); on Spark a model with a new load is written again whole (its partition).
-- The incremental pattern: docs/architecture.md#the-incremental-pattern.
{{ config(**fact_config('response_key')) }}
{%- set fingerprint = code_fingerprint(['stg_raw__responses']) %}
{%- set recoded = is_incremental() and stored_code_changed(fingerprint, 'input_fingerprint') %}
with
{%- if is_incremental() and target.type == 'spark' %}

stored as (
    select model, max(load_id) as load_id
    from {{ this }}
    group by model
),

changed_models as (
    select responses.model
    from {{ ref('stg_raw__responses') }} as responses
    left join stored on stored.model = responses.model
    group by responses.model
    having max(responses.load_id) > coalesce(max(stored.load_id), -1) or {{ 'true' if recoded else 'false' }}
),
{%- endif %}

responses as (
    select * from {{ ref('stg_raw__responses') }}
    {%- if is_incremental() and target.type == 'spark' %}
    where model in (select model from changed_models)
    {%- elif is_incremental() and not recoded %}
    where load_id > (select coalesce(max(load_id), 0) from {{ this }})
    {%- endif %}
),

final as (
    select
        response_key,
        response_id,
        model,
        visibility,
        provider,
        base_url_host,
        reported_model,
        response_parse_status,
        finish_reason,
        call_id,
        prompt_template_version,
        response_parser_version,
        source_file,
        line_number,
        load_id,
        loaded_at,
        '{{ fingerprint }}' as input_fingerprint
    from responses
)

select * from final
