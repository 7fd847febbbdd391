-- The release's fail-closed leak check (clean_context), over every request of fct_hb_requests, plus
-- the probes: no hidden quantity reaches a prompt where the protocol forbids it. After removing the
-- benign unit base period `Index 1982-1984=100`, a D/W/W72 prompt may name only its asserted month
-- (the true one for D, the transplant one for W and W72, which must differ from the true month), an M
-- or REC prompt no month at all, a LAP prompt only its own window; no arm or REC prompt may say
-- `revised` or `65.5` (the full-sample base rate); a REC prompt holds exactly the 8 snapshot lines.
-- One row per violation.
with requests as (
    select
        request_id, kind, arm, decision_date, asserted_date, user_text,
        replace(user_text, 'Index 1982-1984=100', '') as checked_text
    from {{ ref('fct_hb_requests') }}
),

months as (
    select requests.*, found.month
    from requests
    {{ lateral_items("regexp_extract_all(requests.checked_text, '\d{4}-\d{2}', 0)", 'month', 'month_position', 'found') }}
),

date_leaks as (
    select request_id, 'names ' || month || ' in a ' || coalesce(arm, kind) || ' prompt' as violation
    from months
    where (kind = 'arm' and arm in ('D', 'W', 'W72') and month != left(asserted_date, 7))
       or (kind = 'arm' and arm = 'M')
       or kind = 'rec'
       or (kind = 'lap' and month != left(decision_date, 7)
           and not contains(user_text, ' and ' || month))
),

word_leaks as (
    select request_id, 'says revised or 65.5' as violation
    from requests
    where (kind = 'rec' or (kind = 'arm' and arm != 'R'))
      and ({{ regex_search('checked_text', "'(?i)revised'") }} or contains(checked_text, '65.5'))
),

transplant_leaks as (
    select request_id, 'transplant date in the true month' as violation
    from requests
    where arm in ('W', 'W72') and left(asserted_date, 7) = left(decision_date, 7)
),

rec_shape as (
    select request_id, 'REC prompt has ' || snapshot_lines || ' snapshot lines' as violation
    from (
        select request_id, cardinality(regexp_extract_all(user_text, '(?m)^- [A-Z0-9]+: asof=t-\d+mo, value=', 0)) as snapshot_lines
        from requests
        where kind = 'rec'
    ) as rec_requests
    where snapshot_lines != 8
)

select * from date_leaks
union all
select * from word_leaks
union all
select * from transplant_leaks
union all
select * from rec_shape
