"""`hindsight generate questions`: the paper's question generator (§3.3).

One call per row of fct_question_generation_requests (a case with its
narrative and its full reference-source TTS); the reply must be a
JSON array of 10 questions that pass the question schema. An invalid reply
gets one repair attempt (the problems are sent back); what still fails is
kept with the raw output and the reason in raw.rejected_rows. Valid questions
are written to a JSONL file beside the warehouse and loaded exactly like
`hindsight load questions`.
"""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from ingest.db import fetch_dicts, register_run, require_marts
from ingest.llm.prompts import QUESTION_REPAIR, question_generation_messages
from ingest.llm.providers import Settings, make_provider
from ingest.llm.runner import Job, RunSummary, run_jobs
from ingest.load.jsonl import RowError
from ingest.load.questions import check_question, load_questions

QUESTIONS_PER_CASE = 10


def _validate(text: str, cohort: str, case_id: str, cases: dict) -> tuple[list[dict], list[str]]:
    """(valid question objects, problems) for one reply."""
    match = re.search(r"\[.*\]", text, re.S)
    try:
        items = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError as error:
        return [], [f"not a JSON array ({error.msg})"]
    if not isinstance(items, list):
        return [], ["not a JSON array"]
    valid, problems = [], []
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            problems.append(f"element {index}: not an object")
            continue
        try:
            check_question({**item, "case_id": case_id, "cohort": cohort}, cases, cohort)
            valid.append({**item, "case_id": case_id, "cohort": cohort})
        except RowError as error:
            problems.append(f"element {index}: {error.field}: {error.reason} ({error.fix})")
    if len(items) != QUESTIONS_PER_CASE:
        problems.append(f"{len(items)} questions instead of {QUESTIONS_PER_CASE}")
    return valid, problems


def generate_questions(con, spec: str, out_dir: Path, base_url: str | None = None, case_ids: list[str] | None = None,
                       concurrency: int = 8, settings: Settings | None = None) -> tuple[RunSummary, int, list[str]]:
    settings = settings or Settings(max_tokens=8000)
    require_marts(con, "fct_question_generation_requests")
    provider = make_provider(spec, base_url, settings)
    where = f"where case_id in ({', '.join('?' * len(case_ids))})" if case_ids else ""
    rows = fetch_dicts(con, f"select * from fct_question_generation_requests {where} order by cohort, case_id",
                       case_ids or [])
    cases: dict[str, list[str]] = {}
    for row in rows:
        cases.setdefault(row["case_id"], []).append(row["cohort"])

    replies: dict[str, str] = {}

    def keep(cursor, job: Job, completion) -> str:
        replies[job.target_id] = completion.text
        return "ok" if _validate(completion.text, *job.context["case"], cases)[1] == [] else "invalid_questions"

    first = [Job("questions", f"{row['cohort']}/{row['case_id']}", question_generation_messages(row),
                 {"case": (row["cohort"], row["case_id"])}) for row in rows]
    summary = run_jobs(con, provider, spec, first, settings, concurrency, keep)
    repairs = []
    for job in first:
        if job.target_id not in replies:
            continue
        valid, problems = _validate(replies[job.target_id], *job.context["case"], cases)
        if problems:
            follow_up = job.messages + [{"role": "assistant", "content": replies[job.target_id]},
                                        {"role": "user", "content": QUESTION_REPAIR.format(problems="\n".join(problems))}]
            repairs.append(Job("questions_repair", job.target_id, follow_up, job.context))
    if repairs:
        # a run closes its client inside its event loop; the repair round gets a fresh one
        repaired = run_jobs(con, make_provider(spec, base_url, settings), spec, repairs, settings, concurrency, keep)
        summary.answered += repaired.answered
        summary.from_cache += repaired.from_cache
        summary.failed += repaired.failed
        summary.errors += repaired.errors

    accepted, failures = [], []
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    for job in first:
        if job.target_id not in replies:
            continue
        valid, problems = _validate(replies[job.target_id], *job.context["case"], cases)
        accepted += valid
        failures += [(None, "generated_questions", f"{spec}:{job.target_id}", n, "(reply)", problem,
                      "inspect the raw reply in raw.rejected_rows / raw.llm_calls", replies[job.target_id], now)
                     for n, problem in enumerate(problems, start=1)]
    known = set(con.execute("select source_file, reason from raw.rejected_rows where kind = 'generated_questions'").fetchall())
    fresh = [f for f in failures if (f[2], f[5]) not in known]
    if fresh:
        run_id = register_run(con, "questions", spec)
        con.executemany("insert into raw.rejected_rows values (?, ?, ?, ?, ?, ?, ?, ?, ?)", [(run_id, *f[1:]) for f in fresh])
    loaded = 0
    if accepted:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / (re.sub(r"[^A-Za-z0-9_.@-]+", "_", spec) + "_questions.jsonl")
        path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in accepted), encoding="utf-8")
        result = load_questions(con, path)
        loaded = result.inserted
    return summary, loaded, [f[5] for f in failures]
