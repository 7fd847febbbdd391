"""`hindsight answer` and `hindsight generate narratives`: the runners.

Rows come from the requests marts (dbt decides what to ask); results append
to raw.responses and raw.synthetic_narratives, one by one as they arrive, and
every call to raw.llm_calls. Run `hindsight build` before (requests) and
after (scores).
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone

from ingest.db import fetch_dicts, register_run, require_marts
from ingest.llm.prompts import PROMPT_TEMPLATE_VERSION, answer_messages, narrative_messages
from ingest.llm.providers import Completion, Settings, SimulatedModel, base_url_host, make_provider
from ingest.llm.runner import RESPONSE_PARSER_VERSION, Job, RunSummary, parse_answer, run_jobs


def answer_requests(con, spec: str, base_url: str | None = None, conditions: list[str] | None = None,
                    variants: list[str] | None = None, limit: int | None = None, concurrency: int = 8,
                    settings: Settings | None = None, warning_position: str = "end", seed: int = 0) -> RunSummary:
    settings = settings or Settings()
    require_marts(con, "fct_answer_requests", "fct_narrative_requests", "dim_questions")
    provider = make_provider(spec, base_url, settings)
    where, params = ["(r.narrative_model is null or r.narrative_model = ?)"], [spec]
    if conditions:
        where.append(f"r.condition in ({', '.join('?' * len(conditions))})")
        params += conditions
    if variants:
        where.append(f"r.prompt_variant in ({', '.join('?' * len(variants))})")
        params += variants
    # hidden fields are fetched only for a simulator, into the job context; prompts never see them
    hidden = ("q.correct_answer, q.hindsight_trap, q.options_json" if isinstance(provider, SimulatedModel)
              else "null as correct_answer, null as hindsight_trap, null as options_json")
    rows = fetch_dicts(con, f"""
        select r.*, {hidden} from fct_answer_requests r inner join dim_questions q using (question_id)
        where {' and '.join(where)} order by r.request_id {'limit ' + str(int(limit)) if limit else ''}""", params)
    load_id: list[int] = []   # registered with the first answer written, so a no-op rerun leaves no trace
    written = {r[0] for r in con.execute("select response_id from raw.responses where load_id in "
                                         "(select load_id from raw.loads where kind = 'answer')").fetchall()}
    line = [0]

    def write(cursor, job: Job, completion: Completion) -> str:
        request = job.context
        response_id = "r_" + hashlib.sha256(f"{job.call_id}|{request['request_id']}".encode()).hexdigest()[:24]
        parsed, status = parse_answer(completion.text)
        if response_id in written:
            return status
        written.add(response_id)
        answer = parsed.get("answer") if parsed else completion.text
        answer = ("true" if answer else "false") if isinstance(answer, bool) else (None if answer is None else str(answer))
        evidence = parsed.get("evidence") if parsed else None
        payload = {"call_id": job.call_id, "request_id": request["request_id"], "provider": provider.provider,
                   "base_url_host": base_url_host(provider.base_url), "reported_model": completion.reported_model,
                   "response_parse_status": status, "response_parser_version": RESPONSE_PARSER_VERSION,
                   "prompt_template_version": PROMPT_TEMPLATE_VERSION,
                   "narrative_model": request.get("narrative_model"), "warning_position": job.warning_position}
        line[0] += 1
        if not load_id:
            load_id.append(register_run(cursor, "answer", spec))
        cursor.execute("insert into raw.responses values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            load_id[0], f"runner:{spec}", line[0], response_id, request["question_id"], spec, request["condition"],
            request["visibility"], request["prompt_variant"], answer, None if evidence is None else str(evidence),
            json.dumps(payload), datetime.now(timezone.utc).replace(tzinfo=None)])
        return status

    jobs = [Job("answer", row["request_id"], answer_messages(row, warning_position), {**row, "seed": seed},
                row["prompt_variant"], warning_position if row["prompt_variant"] == "warning" else None)
            for row in rows]
    return run_jobs(con, provider, spec, jobs, settings, concurrency, write)


def generate_narratives(con, spec: str, base_url: str | None = None, limit: int | None = None,
                        concurrency: int = 8, settings: Settings | None = None) -> RunSummary:
    """Condition-3 synthetic narratives, one per information scope, by the model that will answer."""
    settings = settings or Settings()
    require_marts(con, "fct_answer_requests", "fct_narrative_requests", "dim_questions")
    provider = make_provider(spec, base_url, settings)
    rows = con.execute(f"""select narrative_request_id, tts_lines from fct_narrative_requests
                           order by narrative_request_id {'limit ' + str(int(limit)) if limit else ''}""").fetchall()
    written = {r[0] for r in con.execute("select narrative_request_id from raw.synthetic_narratives where model = ?",
                                         [spec]).fetchall()}

    def write(cursor, job: Job, completion: Completion) -> None:
        if job.target_id not in written:
            written.add(job.target_id)
            cursor.execute("insert into raw.synthetic_narratives values (?, ?, ?, ?)",
                        [job.target_id, spec, completion.text.strip(), datetime.now(timezone.utc).replace(tzinfo=None)])
        return None

    jobs = [Job("narrative", rid, narrative_messages(lines), {"tts_lines": lines}) for rid, lines in rows]
    return run_jobs(con, provider, spec, jobs, settings, concurrency, write)
