"""`hindsight judge`: score free responses with the Appendix C judge prompts.

The requests are the rows of fct_judgment_requests (dbt decides what is judged):
individual judgments (accuracy_score, htr_score) for every free-response
answer the metrics use, paired judgments (full_equals_masked, the four
scores, hbr_score) for every free-response pair. The judge sees the reference
and the trap, as the paper's judge does; answering models never do. Scores
outside {0, 0.5, 1} are kept with the raw reply in raw.llm_calls and not
stored as a judgment.
"""
from __future__ import annotations

import hashlib
from datetime import datetime, timezone

from ingest.db import fetch_dicts, require_marts
from ingest.llm.profiles import Overrides, SettingsResolver
from ingest.llm.prompts import judgment_messages
from ingest.llm.providers import Completion, make_provider
from ingest.llm.runner import Job, RunSummary, parse_json_object, run_jobs

SCORES = {0, 0.5, 1}
INDIVIDUAL_FIELDS = ["accuracy_score", "htr_score"]
PAIRED_SCORE_FIELDS = ["full_accuracy_score", "masked_accuracy_score", "full_htr_score", "masked_htr_score", "hbr_score"]


def _parse_scores(text: str, fields: list[str], flags: list[str] = ()) -> tuple[dict | None, str]:
    value, status = parse_json_object(text, fields[0])
    if value is None:
        return None, status
    if any(value.get(f) not in SCORES for f in fields) or any(not isinstance(value.get(f), bool) for f in flags):
        return None, "invalid_scores"
    return value, "ok"


def judge(con, spec: str, base_url: str | None = None, limit: int | None = None, concurrency: int | None = None,
          overrides: Overrides | None = None, answering: list[str] | None = None) -> RunSummary:
    """Judge the requests of fct_judgment_requests (of the ANSWERING models' answers only, when given):
    the individual ones, then the paired ones, LIMIT in all."""
    overrides = overrides or Overrides()
    require_marts(con, "fct_judgment_requests")
    provider = make_provider(spec, base_url, overrides.transport())
    settings_for = SettingsResolver(con, "judge", overrides)
    models = f"and model in ({', '.join('?' * len(answering))})" if answering else ""
    jobs = []
    for kind, order in (("individual", "response_id"), ("paired", "full_response_id, masked_response_id")):
        left = None if limit is None else max(0, int(limit) - len(jobs))
        if left == 0:
            break
        for request in fetch_dicts(con, f"""select * from fct_judgment_requests where judgment_kind = ? {models}
                                            order by {order} {'limit ' + str(left) if left else ''}""", [kind, *(answering or [])]):
            jobs.append(Job("judge", request["target_id"], judgment_messages(request),
                            {"kind": kind, **{k: request[k] for k in ("response_id", "full_response_id", "masked_response_id")}},
                            settings=settings_for(request)))

    return run_jobs(con, provider, spec, jobs, overrides.transport(), concurrency, judgment_writer(con, spec),
                    overrides.batch)


def judgment_writer(con, spec: str):
    """The writer of judgments to raw.judgments (scores outside {0, 0.5, 1} stay in the ledger only)."""
    judged = {r[0] for r in con.execute("select coalesce(response_id, full_response_id || '|' || masked_response_id) "
                                        "from raw.judgments where judge_model = ?", [spec]).fetchall()}

    def write(cursor, job: Job, completion: Completion) -> str:
        kind = job.context["kind"]
        if kind == "individual":
            value, status = _parse_scores(completion.text, INDIVIDUAL_FIELDS)
        else:
            value, status = _parse_scores(completion.text, PAIRED_SCORE_FIELDS, ["full_equals_masked"])
        if completion.truncated:
            return "truncated"        # a judgment cut off by the token limit is not a judgment
        if value is None or job.target_id in judged:
            return status
        judged.add(job.target_id)
        row = {f: value.get(f) for f in INDIVIDUAL_FIELDS + PAIRED_SCORE_FIELDS + ["full_equals_masked"]}
        cursor.execute("insert into raw.judgments values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            "j_" + hashlib.sha256(f"{job.call_id}|{job.target_id}".encode()).hexdigest()[:24], kind,
            job.context.get("response_id"), job.context.get("full_response_id"), job.context.get("masked_response_id"),
            spec, row["accuracy_score"], row["htr_score"],
            row["full_equals_masked"], row["full_accuracy_score"], row["masked_accuracy_score"], row["full_htr_score"],
            row["masked_htr_score"], row["hbr_score"], completion.text, datetime.now(timezone.utc).replace(tzinfo=None)])
        return status

    return write
