"""`hindsight generate questions`: the paper's question generator (§3.3).

One call per row of fct_question_generation_requests (a case with its
narrative and its full reference-source TTS); the reply must be a JSON array
of questions that pass the question schema and the paper's design (10 per
case, 2/3/5 accuracy/hindsight_bias/both, all three formats, four options for
multiple choice, a trap that is not the reference and none for accuracy). An
invalid reply gets one repair attempt (the problems are sent back); a question
that still fails is dropped, a set that still misses the design is rejected
whole, each kept with the raw output and the reason in raw.rejected_rows. Valid questions
are written to a JSONL file beside the warehouse and loaded exactly like
`hindsight load questions`.
"""
from __future__ import annotations

import json
import re
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path

from ingest.db import fetch_dicts, insert_rows, register_run, require_marts
from ingest.llm.profiles import Overrides, SettingsResolver
from ingest.llm.prompts import QUESTION_REPAIR, question_generation_messages
from ingest.llm.providers import make_provider
from ingest.llm.runner import Job, RunSummary, run_jobs
from ingest.load.jsonl import RowError
from ingest.load.question_design import case_deviations, question_deviations
from ingest.load.questions import check_question, load_questions


def _validate(text: str, cohort: str, case_id: str, cases: dict) -> tuple[list[dict], list[str], list[str]]:
    """(valid question objects, problems of single questions, problems of the set) for one reply:
    the question schema, then the paper's design of a question set (ingest/load/question_design.py)."""
    match = re.search(r"\[.*\]", text, re.S)
    try:
        items = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError as error:
        return [], [], [f"not a JSON array ({error.msg})"]
    if not isinstance(items, list):
        return [], [], ["not a JSON array"]
    valid, problems = [], []
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            problems.append(f"element {index}: not an object")
            continue
        try:
            check_question({**item, "case_id": case_id, "cohort": cohort}, cases, cohort)
        except RowError as error:
            problems.append(f"element {index}: {error.field}: {error.reason} ({error.fix})")
            continue
        deviations = question_deviations(item)
        problems += [f"element {index}: {deviation}" for deviation in deviations]
        if not deviations:
            valid.append({**item, "case_id": case_id, "cohort": cohort})
    return valid, problems, case_deviations([item for item in items if isinstance(item, dict)])


def generate_questions(con, spec: str, out_dir: Path, base_url: str | None = None, case_ids: list[str] | None = None,
                       concurrency: int = 8, overrides: Overrides | None = None,
                       warehouse=None) -> tuple[RunSummary, int, list[str]]:
    """Ask, validate, repair once; then load the valid questions and the problems into the warehouse:
    CON itself, or, for a run (CON its store), WAREHOUSE() opened for the load alone."""
    overrides = overrides or Overrides()
    require_marts(con, "fct_question_generation_requests")
    provider = make_provider(spec, base_url, overrides.transport())
    settings_for = SettingsResolver(con, "question_generation", overrides)
    settings = overrides.transport()
    where = f"where case_id in ({', '.join('?' * len(case_ids))})" if case_ids else ""
    rows = fetch_dicts(con, f"select * from fct_question_generation_requests {where} order by cohort, case_id",
                       case_ids or [])
    cases: dict[str, list[str]] = {}
    for row in rows:
        cases.setdefault(row["case_id"], []).append(row["cohort"])

    # each case's newest reply with its validation (valid questions, problems, set problems), checked once
    replies: dict[str, tuple[str, tuple]] = {}

    def keep(cursor, job: Job, completion) -> str:
        checked = _validate(completion.text, *job.context["case"], cases)
        replies[job.target_id] = (completion.text, checked)
        return "ok" if not checked[1] and not checked[2] else "invalid_questions"

    first = [Job("questions", f"{row['cohort']}/{row['case_id']}", question_generation_messages(row),
                 {"case": (row["cohort"], row["case_id"])}, settings=settings_for(row)) for row in rows]
    summary = run_jobs(con, provider, spec, first, settings, concurrency, keep, overrides.batch)
    repairs = []
    for job in first:
        if job.target_id not in replies:
            continue
        text, (_, problems, set_problems) = replies[job.target_id]
        if problems or set_problems:
            problems = problems + set_problems
            follow_up = job.messages + [{"role": "assistant", "content": text},
                                        {"role": "user", "content": QUESTION_REPAIR.format(problems="\n".join(problems))}]
            repairs.append(Job("questions_repair", job.target_id, follow_up, job.context, settings=job.settings))
    if repairs:
        # a run closes its client inside its event loop; the repair round gets a fresh one
        repaired = run_jobs(con, make_provider(spec, base_url, settings), spec, repairs, settings, concurrency, keep,
                            overrides.batch)
        summary.answered += repaired.answered
        summary.from_cache += repaired.from_cache
        summary.failed += repaired.failed
        summary.errors += repaired.errors
        summary.submitted += repaired.submitted
        summary.in_batches += repaired.in_batches

    accepted, failures = [], []
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    for job in first:
        if job.target_id not in replies:
            continue
        text, (valid, problems, set_problems) = replies[job.target_id]
        if set_problems:
            # a set that still misses the design after its repair is rejected whole: its questions
            # would skew the metrics' eval-target and format mix
            problems = problems + [f"question set rejected: {p}" for p in set_problems]
            valid = []
        accepted += valid
        failures += [(None, "generated_questions", f"{spec}:{job.target_id}", n, "(reply)", problem,
                      "inspect the raw reply in raw.rejected_rows / raw.llm_calls", text, now)
                     for n, problem in enumerate(problems, start=1)]
    loaded = 0
    if warehouse and hasattr(con, "release_marts"):
        con.release_marts()          # (the warehouse itself, where no snapshot was published: opened for the load)
    with (warehouse() if warehouse else nullcontext(con)) as target:
        known = set(target.execute("select source_file, reason from raw.rejected_rows where kind = 'generated_questions'").fetchall())
        fresh = [f for f in failures if (f[2], f[5]) not in known]
        if fresh:
            run_id = register_run(target, "questions", spec)
            insert_rows(target, "raw.rejected_rows", [(run_id, *f[1:]) for f in fresh])
        if accepted:
            out_dir.mkdir(parents=True, exist_ok=True)
            path = out_dir / (re.sub(r"[^A-Za-z0-9_.@-]+", "_", spec) + "_questions.jsonl")
            path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in accepted), encoding="utf-8")
            loaded = load_questions(target, path).inserted
    return summary, loaded, [f[5] for f in failures]
