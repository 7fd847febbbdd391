-- One row per date-recovery answer the audit counts: the release's probe lines, and replies asked
-- here (parsed by int_hb_reply_parses), which replace a release's lines of the same model and date.
-- The estimated year and month are parsed when the estimate is a `YYYY-MM` (empty, shorter or
-- non-integer estimates stay unparsed and are not counted).
with asked as (
    select model_key, request_id as probe_id, decision_date, estimated_date
    from {{ ref('int_hb_reply_parses') }}
    where kind = 'rec' and not is_truncated
        and parser_version = (select max(newest.parser_version) from {{ ref('int_hb_reply_parses') }} as newest)
),

released as (
    select probes.model_key, 'line ' || probes.line_number as probe_id, probes.decision_date, probes.estimated_date
    from {{ ref('stg_raw__hb_date_probes') }} as probes
    where not exists (
        select 1 from asked where asked.model_key = probes.model_key and asked.decision_date = probes.decision_date
    )
),

answers as (
    select * from asked
    union all
    select * from released
)

select
    model_key,
    probe_id,
    decision_date,
    estimated_date,
    case when {{ regex_search("coalesce(estimated_date, '')", "'^\d{4}-\d{1,2}'") }}
        then cast(left(estimated_date, 4) as integer) end as estimated_year,
    case when {{ regex_search("coalesce(estimated_date, '')", "'^\d{4}-\d{1,2}'") }}
        then try_cast(split_part(estimated_date, '-', 2) as integer) end as estimated_month
from answers
