-- One row per LAP answer: the release's probe lines (answers as stored, duplicates kept) and replies
-- asked here, read permissively (the bench runner's parser; the strict reading is beside it), which
-- replace a release's lines of the same model, probe set, temperature and date. probe_set `protocol`
-- is the row's LAP; `lap_sensitivity` the re-probes of the robustness check (temperature NULL = the
-- protocol's).
with asked as (
    select
        model_key, request_id as probe_id, decision_date, sample, lap_answer as answer, lap_answer_strict as answer_strict,
        probe_set, temperature
    from {{ ref('int_hb_reply_parses') }}
    where kind = 'lap' and not is_truncated
        and parser_version = (select max(newest.parser_version) from {{ ref('int_hb_reply_parses') }} as newest)
),

released as (
    select
        probes.model_key, 'line ' || probes.line_number as probe_id, probes.decision_date, probes.rep as sample, probes.answer,
        null as answer_strict,
        probes.probe_set, probes.temperature
    from {{ ref('stg_raw__hb_lap_probes') }} as probes
    where not exists (
        select 1 from asked
        where asked.model_key = probes.model_key and asked.decision_date = probes.decision_date
            and asked.probe_set = probes.probe_set and asked.temperature is not distinct from probes.temperature
    )
)

select * from asked
union all
select * from released
