-- One row per HindsightBench reply x sketch parser version: what each versioned parser read from the
-- reply (int_hb_reply_parses) - an arm reply's sketch counts and directions, the REC estimate, the
-- LAP answer (permissive and strict); a truncated reply is kept, unparsed. Joins fct_hb_replies on
-- its keys (model_key, kind, arm, decision_date, replicate, sample, probe_set, temperature).
{{ config(materialized='view') }}
with parses as (
    select * from {{ ref('int_hb_reply_parses') }}
),

final as (
    select
        model_key,
        kind,
        arm,
        decision_date,
        replicate,
        sample,
        probe_set,
        temperature,
        request_id,
        parser_version,
        parse_status,
        valid_count,
        invalid_count,
        directions,
        estimated_date,
        lap_answer,
        lap_answer_strict
    from parses
)

select * from final
