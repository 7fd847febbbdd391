"""`hindsight judge`: score free responses with the Appendix C judge prompts.

Individual judgments (accuracy_score, htr_score) for every free-response
answer the metrics use, paired judgments (full_equals_masked, the four
scores, hbr_score) for every free-response pair. The judge sees the reference
and the trap, as the paper's judge does; answering models never do. Scores
outside {0, 0.5, 1} are kept with the raw reply in raw.llm_calls and not
stored as a judgment.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone

from ingest.answer import _require_marts
from ingest.prompts import JUDGE_INDIVIDUAL, JUDGE_PAIRED
from ingest.providers import Completion, Settings, make_provider
from ingest.runner import Job, RunSummary, parse_json_object, run_jobs

SCORES = {0, 0.5, 1}
INDIVIDUAL_FIELDS = ["accuracy_score", "htr_score"]
PAIRED_SCORE_FIELDS = ["full_accuracy_score", "masked_accuracy_score", "full_htr_score", "masked_htr_score", "hbr_score"]


def _parse_scores(text: str, fields: list[str], flags: list[str] = ()) -> tuple[dict | None, str]:
    value, status = parse_json_object(text)
    if value is None:
        return None, status
    if any(value.get(f) not in SCORES for f in fields) or any(not isinstance(value.get(f), bool) for f in flags):
        return None, "invalid_scores"
    return value, "ok"


def judge(con, spec: str, base_url: str | None = None, limit: int | None = None, concurrency: int = 8,
          settings: Settings | None = None) -> RunSummary:
    settings = settings or Settings(temperature=0.0)
    _require_marts(con)
    provider = make_provider(spec, base_url, settings)
    now = lambda: datetime.now(timezone.utc).replace(tzinfo=None)  # noqa: E731
    judged = {r[0] for r in con.execute("select coalesce(response_id, full_response_id || '|' || masked_response_id) "
                                        "from raw.judgments where judge_model = ?", [spec]).fetchall()}
    singles = con.execute(f"""
        select a.response_id, q.question, q.correct_answer, q.hindsight_trap, a.answer
        from fct_answers a inner join dim_questions q using (question_id)
        where a.format = 'free response' and a.is_latest_in_cell order by a.response_id
        {'limit ' + str(int(limit)) if limit else ''}""").fetchall()
    pairs = con.execute(f"""
        select p.full_response_id, p.masked_response_id, q.question, q.correct_answer, q.hindsight_trap,
               f.answer, m.answer
        from fct_answer_pairs p inner join dim_questions q using (question_id)
        inner join fct_answers f on f.response_id = p.full_response_id
        inner join fct_answers m on m.response_id = p.masked_response_id
        where p.format = 'free response' order by p.pair_id {'limit ' + str(int(limit)) if limit else ''}""").fetchall()
    jobs = []
    for response_id, question, reference, trap, answer in singles:
        user = json.dumps({"question": question, "reference_answer": reference, "hindsight_trap": trap, "answer": answer})
        jobs.append(Job("judge", response_id, [{"role": "system", "content": JUDGE_INDIVIDUAL}, {"role": "user", "content": user}],
                        {"kind": "individual", "response_id": response_id}))
    for full_id, masked_id, question, reference, trap, full_answer, masked_answer in pairs:
        user = json.dumps({"question": question, "reference_answer": reference, "hindsight_trap": trap,
                           "full_condition_answer": full_answer, "masked_condition_answer": masked_answer})
        jobs.append(Job("judge", f"{full_id}|{masked_id}", [{"role": "system", "content": JUDGE_PAIRED},
                                                             {"role": "user", "content": user}],
                        {"kind": "paired", "full_response_id": full_id, "masked_response_id": masked_id}))

    def write(cursor, job: Job, completion: Completion) -> str:
        kind = job.context["kind"]
        if kind == "individual":
            value, status = _parse_scores(completion.text, INDIVIDUAL_FIELDS)
        else:
            value, status = _parse_scores(completion.text, PAIRED_SCORE_FIELDS, ["full_equals_masked"])
        if value is None or job.target_id in judged:
            return status
        judged.add(job.target_id)
        row = {f: value.get(f) for f in INDIVIDUAL_FIELDS + PAIRED_SCORE_FIELDS + ["full_equals_masked"]}
        cursor.execute("insert into raw.judgments values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            "j_" + hashlib.sha256(f"{job.call_id}|{job.target_id}".encode()).hexdigest()[:24], kind, job.context.get("response_id"), job.context.get("full_response_id"),
            job.context.get("masked_response_id"), spec, row["accuracy_score"], row["htr_score"],
            row["full_equals_masked"], row["full_accuracy_score"], row["masked_accuracy_score"], row["full_htr_score"],
            row["masked_htr_score"], row["hbr_score"], completion.text, now()])
        return status

    return run_jobs(con, provider, spec, jobs, settings, concurrency, write)
