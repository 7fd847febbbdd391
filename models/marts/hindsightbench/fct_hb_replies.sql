-- One row per HindsightBench reply that counts (stg_raw__hb_responses): the text a model gave to an
-- arm (R, D, M, W, W72), REC or LAP call, how it ended, and the decision node's asserted transplant
-- date (what the transcript audit reads a W reply against), so an audit row's cells lead to the
-- replies behind them. What the parsers read from each is in fct_hb_reply_parses; the request sent is
-- fct_hb_requests' row of the same request_id, the call's tokens and latency fct_llm_calls' of call_id.
-- A view: the publish writes its rows once per build.
{{ config(materialized='view') }}
with replies as (
    select * from {{ ref('stg_raw__hb_responses') }}
),

nodes as (
    select decision_date, period, fake_date from {{ ref('int_hb_nodes') }}
),

final as (
    select
        replies.model_key,
        replies.source,
        replies.kind,
        replies.arm,
        replies.decision_date,
        nodes.period,
        replies.replicate,
        replies.sample,
        replies.probe_set,
        replies.temperature,
        replies.request_id,
        replies.call_id,
        replies.reply_text,
        replies.finish_reason,
        replies.is_truncated,
        nodes.fake_date,
        replies.load_id,
        replies.received_at
    from replies
    left join nodes on nodes.decision_date = replies.decision_date
)

select * from final
