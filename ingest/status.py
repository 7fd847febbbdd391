"""`hindsight status`: what is loaded, and what was quarantined or rejected."""
from __future__ import annotations

import json
from pathlib import Path

from ingest.db import serve_path
from ingest.load.question_design import case_deviations, question_deviations
from ingest.serve import snapshots


def text_table(con, sql: str, params=None) -> list[str]:
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    if not rows:
        return ["  (none)"]
    cells = [names] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(names))]
    lines = ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  " + "  ".join("-" * w for w in widths))
    return lines


def _exists(con, schema: str, table: str) -> bool:
    return con.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?", [schema, table]
    ).fetchone()[0] > 0


def price_join_sql(con) -> str:
    return "left join reference.model_prices p on p.model = c.model" if _exists(con, "reference", "model_prices") else ""


NO_PRICE = "no price for this model in seeds/model_prices.csv"


def call_cost_sql(con) -> str:
    """USD of the ledger rows `c` (joined to prices `p`): batch calls at the batch rate."""
    if not _exists(con, "reference", "model_prices"):
        return "null"
    return ("round(sum(case when c.batch_key is null"
            " then coalesce(c.input_tokens, 0) * p.input_usd_per_million_tokens"
            " + coalesce(c.output_tokens, 0) * p.output_usd_per_million_tokens"
            " else coalesce(c.input_tokens, 0) * p.batch_input_usd_per_million_tokens"
            " + coalesce(c.output_tokens, 0) * p.batch_output_usd_per_million_tokens end) / 1e6, 4)")


def call_cost_text_sql(con) -> str:
    """The cost as text, saying why it is missing: no price row for the model, or no prices loaded."""
    if not _exists(con, "reference", "model_prices"):
        return "'no prices loaded (`hindsight build` loads seeds/model_prices.csv)'"
    return (f"case when bool_and(c.provider = 'sim') then '0 (simulator)' when count(p.model) = 0 then '{NO_PRICE}' "
            f"else cast({call_cost_sql(con)} as varchar) end")


def batch_lines(con) -> list[str]:
    """`hindsight batches`: every batch with its provider, model, status, request counts, age and cost
    (collected: the ledger's tokens at the batch rate; open: estimated from the input size, at 4 bytes
    a token, and the model's mean output so far)."""
    priced = _exists(con, "reference", "model_prices")
    prices = "left join reference.model_prices p on p.model = b.model" if priced else ""
    estimate = ("round((b.input_bytes / 4.0 * p.batch_input_usd_per_million_tokens + b.n_requests * "
                "coalesce(o.mean_output, 500) * p.batch_output_usd_per_million_tokens) / 1e6, 4)") if priced else "null"
    return ["batches (status: preparing, validating, in_progress, finalizing, ended or completed, collected; "
            "cost: collected from the ledger, open estimated, at the batch rate):"] + text_table(con, f"""
        with spent as (
            select c.batch_key, {call_cost_sql(con)} as cost_usd
            from raw.llm_calls c {price_join_sql(con)} where c.batch_key is not null group by c.batch_key
        ),
        output as (select model, avg(output_tokens) as mean_output from raw.llm_calls group by model)
        select coalesce(b.batch_id, '(' || left(b.batch_key, 12) || ')') as batch, b.provider, b.model, b.purpose,
               b.status, b.n_requests as requests, coalesce(b.n_succeeded, 0) as succeeded,
               coalesce(b.n_errored, 0) as errored, coalesce(b.n_expired, 0) as expired,
               coalesce(b.n_cancelled, 0) as cancelled, coalesce(b.n_stored, 0) as stored,
               coalesce(b.n_duplicates, 0) as duplicates,
               cast(round(epoch(current_timestamp::timestamp - b.submitted_at) / 3600, 1) as varchar) || ' h' as age,
               case when b.status = 'collected' then spent.cost_usd else {estimate} end as cost_usd,
               case when b.status = 'collected' then '' else 'est.' end as cost_kind
        from raw.batches b left join spent using (batch_key) left join output o on o.model = b.model {prices}
        order by b.submitted_at, b.batch_key""")


def serving_lines(path: Path) -> list[str]:
    """Where readers connect, which build they see, and the snapshots' disk use."""
    now, kept = snapshots.current(path), snapshots.snapshots(path)
    seen = (f"snapshot {now.id}, published {now.manifest['published_at']}" if now
            else "nothing published yet (`hindsight build` publishes; `hindsight publish` for a warehouse built before)")
    return [f"marts for readers: {serve_path(path)} ({seen})",
            f"snapshots: {len(kept)} kept in {snapshots.snapshots_root(path)}, {snapshots.disk_use(path) / 1e6:.1f} MB "
            f"(the newest {snapshots.keep()} stay; {snapshots.KEEP_ENV} sets how many)"]


def status_report(con, path: Path) -> str:
    out = [f"warehouse: {path}", *serving_lines(path), "", "cases and TTS files loaded, per cohort and source:"]
    out += text_table(con, """
        select cohort, coalesce(source, '(narrative)') as source,
               count(distinct case_id) as cases,
               count(*) filter (where status = 'loaded') as files,
               count(*) filter (where status = 'rejected') as rejected_files,
               count(*) filter (where status = 'skipped') as skipped_files,
               coalesce(sum(n_records) filter (where kind = 'tts'), 0) as tts_records
        from raw.loads where kind in ('narrative', 'tts')
        group by all order by cohort, source""")
    out += ["", "questions per cohort, responses per model:"]
    out += text_table(con, """
        select 'questions' as what, cohort as key, count(distinct question_id) as n from raw.questions group by cohort
        union all
        select 'responses', model, count(*) from raw.responses group by model
        union all
        select 'synthetic narratives', model, count(*) from raw.synthetic_narratives group by model
        order by what, key""")
    out += ["", "model calls, tokens and cost per model, direct and batch apart (prices: seeds/model_prices.csv, "
                "after `hindsight build`; batch calls at the batch rate):"]
    out += text_table(con, f"""
        select c.model, c.purpose, case when c.batch_key is null then 'direct' else 'batch' end as via,
               count(*) filter (where c.status = 'ok') as ok_calls,
               count(*) filter (where c.status = 'error') as failed_calls,
               count(*) filter (where c.parse_status not in ('ok', 'prompt_truncated')) as unparsed,
               count(*) filter (where c.status = 'context_overflow') as context_overflow,
               count(*) filter (where c.parse_status = 'prompt_truncated') as prompt_truncated,
               coalesce(sum(c.input_tokens), 0) as tokens_in, coalesce(sum(c.output_tokens), 0) as tokens_out,
               {call_cost_text_sql(con)} as cost_usd
        from raw.llm_calls c {price_join_sql(con)} group by all order by c.model, c.purpose, via""")
    if _exists(con, "main", "agg_answer_completion"):
        out += ["", "replies cut off by the token limit, per model and condition (scored as invalid; "
                    "`hindsight answer --retry-truncated --max-tokens N` re-asks them):"]
        out += text_table(con, """
            select model, condition, sum(n_answers) as answers, sum(n_truncated) as truncated,
                   round(sum(n_truncated) / sum(n_answers), 4) as truncation_rate, sum(n_truncated_in_use) as still_in_use
            from main.agg_answer_completion group by model, condition having sum(n_truncated) > 0
            order by model, condition""")
    if _exists(con, "main", "agg_pair_losses"):
        lost = text_table(con, """
            select model, condition, prompt_variant, n_full_lost || '/' || n_full_asked as full_lost,
                   n_masked_lost || '/' || n_masked_asked as masked_lost, n_pairs_lost as pairs_lost,
                   coalesce(loss_warning, '') as warning
            from main.agg_pair_losses order by model, condition, prompt_variant""")
        if lost != ["  (none)"]:
            out += ["", "requests beyond the context window or answered to a shortened prompt (never answers; the paired "
                        "metrics lack their pairs; `hindsight answer --retry-overflow` after raising the server's context):"]
            out += lost
    if _exists(con, "main", "agg_tts_quality"):
        out += ["", "TTS records by status and reason (as of the last `hindsight build`):"]
        out += text_table(con, """
            select cohort, source, status, coalesce(reason, '') as reason, sum(n_lines) as n_lines
            from main.agg_tts_quality group by all order by cohort, source, status, reason""")
    else:
        out += ["", "TTS records are classified by `hindsight build`; run it to see quarantine counts by reason."]
    out += ["", "files rejected whole:"]
    out += text_table(con, """
        select load_id, kind, cohort, source, source_file, reason from raw.loads
        where status = 'rejected' order by load_id, source_file""")
    out += ["", "files skipped (another format of the same case was loaded, or not a TTS file):"]
    out += text_table(con, """
        select cohort, source, source_file, reason from raw.loads
        where status = 'skipped' order by cohort, source, source_file""")
    out += ["", "question sets off the paper's design (§3.3: 10 per case, 2/3/5 accuracy/hindsight_bias/both, "
                "three formats, 4 options, a trap unlike the reference; warnings, nothing was rejected):"]
    out += question_design_lines(con)
    out += judgment_lines(con)
    out += ["", "rejected question and response rows, by field and reason:"]
    out += text_table(con, """
        select kind, field, reason, count(*) as n_rows, min(source_file || ':' || line_number) as first_at
        from raw.rejected_rows group by all order by kind, n_rows desc""")
    out += ["", "Great Expectations validations, per suite and expectation over all loads:"]
    out += text_table(con, """
        select kind, suite, expectation, coalesce(column_name, '') as column_name, severity,
               count(*) as runs, count(*) filter (where not success) as failed_runs,
               sum(unexpected_count) as unexpected
        from raw.validations group by all order by kind, suite, expectation, column_name""")
    return "\n".join(out)


def judgment_lines(con) -> list[str]:
    """Loaded judgments the last build could not match to their question and answers, with the reason
    (they wait in raw: load what they name and build again), and those loaded since that build."""
    loaded = con.execute("select count(*) from raw.loaded_judgments").fetchone()[0]
    if not loaded:
        return []
    if not _exists(con, "intermediate", "int_loaded_judgments_matched"):
        return ["", f"loaded judgments: {loaded}, not matched to answers yet: run `hindsight build`"]
    unmatched = con.execute("select count(*) from intermediate.int_judgments_unmatched").fetchone()[0]
    if not unmatched:
        out = ["", f"loaded judgments: {loaded}, every one the last build saw matched to its answers"]
    else:
        out = ["", "loaded judgments the last build could not use (load what they name, then `hindsight build`):"]
        out += text_table(con, """
            select reason, model, count(*) as n_judgments, min(source_file || ':' || line_number) as first_at
            from intermediate.int_judgments_unmatched group by all order by n_judgments desc, reason, model""")
    pending = con.execute("""select count(*) from raw.loaded_judgments
        where judgment_id not in (select judgment_id from intermediate.int_loaded_judgments_matched)""").fetchone()[0]
    if pending:
        out.append(f"  {pending} judgments loaded since the last build: `hindsight build` matches them")
    return out


def question_design_lines(con) -> list[str]:
    """Each case's deviations from the question-set design, for the newest version of every question."""
    rows = con.execute("""
        select cohort, case_id, question_id, payload from raw.questions
        qualify row_number() over (partition by question_id order by load_id desc, line_number desc) = 1
        order by cohort, case_id, question_id""").fetchall()
    cases: dict[tuple[str, str], list[tuple[str, dict]]] = {}
    for cohort, case_id, question_id, payload in rows:
        cases.setdefault((cohort, case_id), []).append((question_id, json.loads(payload)))
    lines = []
    for (cohort, case_id), questions in cases.items():
        found = case_deviations([q for _, q in questions])
        found += [f"{question_id}: {d}" for question_id, q in questions for d in question_deviations(q)]
        lines += [f"  {cohort} {case_id}: {deviation}" for deviation in found]
    return lines or ["  (none)"]
