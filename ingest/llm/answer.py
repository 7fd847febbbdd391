"""`hindsight answer` and `hindsight generate narratives`: the runners.

Rows come from the requests marts (dbt decides what to ask, and with which
sampling profile); results append to raw.responses and raw.synthetic_narratives,
one by one as they arrive, and every call to raw.llm_calls. Each request is
asked `samples` times (one call per sample). Run `hindsight build` before
(requests) and after (scores).

Answers are stored under a label: `--label NAME`, or by default the model, unless the model's
stored answers were made with other settings, in which case the model with the run's own sampling
flags in brackets (`llamacpp:smollm2[max_tokens=256,response_format=json_object]`), so two setups of
one model are two rows of every mart and never mix. A given label whose stored answers were made
otherwise stops the run, naming the difference. Calls are the model's, whatever the label: a
relabelled setup reuses its stored replies, never paying twice.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone

from ingest.db import fetch_dicts, register_run, require_marts
from ingest.errors import InputError
from ingest.llm.profiles import Overrides, SettingsResolver
from ingest.llm.prompts import PROMPT_TEMPLATE_VERSION, answer_messages, narrative_messages
from ingest.llm.providers import Completion, SimulatedModel, base_url_host, make_provider
from ingest.llm.runner import RESPONSE_PARSER_VERSION, Job, RunSummary, parse_answer, run_jobs


def _truncated_samples(con, spec: str, overrides: Overrides) -> dict[str, set[int]]:
    """{request_id: sample indexes} whose answer by `spec` is still truncated (no complete reply yet);
    refuses a budget no larger than the one that ran out."""
    rows = con.execute("""
        with answers as (
            select payload ->> 'request_id' as request_id,
                   coalesce(cast(payload ->> 'sample_index' as integer), 0) as sample_index,
                   payload ->> 'response_parse_status' = 'truncated' as truncated,
                   payload ->> 'call_id' as call_id
            from raw.responses where model = ? and payload ->> 'request_id' is not null
        )
        select answers.request_id, answers.sample_index, max(calls.max_tokens)
        from answers left join raw.llm_calls as calls using (call_id)
        group by answers.request_id, answers.sample_index
        having min(case when answers.truncated then 1 else 0 end) = 1""", [spec]).fetchall()   # (SQLite has no bool_and)
    largest = max((row[2] or 0 for row in rows), default=0)
    if rows and (overrides.max_tokens or 0) <= largest:
        raise InputError("--max-tokens", f"{len(rows)} truncated answers ran out at up to {largest} output tokens",
                         f"pass --max-tokens above {largest} with --retry-truncated (the truncated replies stay in the ledger)")
    samples: dict[str, set[int]] = {}
    for request_id, sample, _ in rows:
        samples.setdefault(request_id, set()).add(sample)
    return samples


LABEL_FLAGS = ("profile", "temperature", "max_tokens", "response_format", "reasoning_effort", "thinking_budget")


def flagged_label(spec: str, overrides: Overrides) -> str:
    """The model with the run's own output-affecting flags in brackets (none: the model alone)."""
    flags = [f"{name}={getattr(overrides, name):g}" if isinstance(getattr(overrides, name), float) else f"{name}={getattr(overrides, name)}"
             for name in LABEL_FLAGS if getattr(overrides, name) is not None]
    flags += ["api=responses"] if overrides.api == "responses" else []
    return f"{spec}[{','.join(flags)}]" if flags else spec


def _settings_text(settings: dict) -> str:
    return ", ".join(f"{key}={value}" for key, value in sorted(settings.items())) or "the defaults"


def settings_conflict(con, label: str, jobs: list[Job], retry_truncated: bool) -> str | None:
    """What differs between this run's output-affecting settings and those the label's stored answers
    were made with (per request; a retry of truncated answers may raise max_tokens), or None."""
    stored: dict[str, set[str]] = {}
    for request_id, settings in con.execute("""
            select distinct payload ->> 'request_id', payload ->> 'settings' from raw.responses
            where model = ? and payload ->> 'settings' is not null""", [label]).fetchall():
        stored.setdefault(request_id, set()).add(settings)

    def comparable(settings: dict) -> str:
        return json.dumps({k: v for k, v in settings.items() if not (retry_truncated and k == "max_tokens")}, sort_keys=True)

    for job in jobs:
        ours = job.settings.output_affecting()
        for theirs in stored.get(job.target_id, ()):
            if comparable(json.loads(theirs)) != comparable(ours):
                return (f"the answers stored as {label!r} were made with {_settings_text(json.loads(theirs))}; "
                        f"this run asks {_settings_text(ours)}")
    return None


def choose_label(con, spec: str, label: str | None, overrides: Overrides, jobs: list[Job], retry_truncated: bool) -> tuple[str, str | None]:
    """(the label the answers are stored under, a note when it is not the model itself). Given, the
    label must not hold answers made otherwise (InputError). By default it is the model, unless the
    model's stored answers were made with other settings: then the model with this run's flags in
    brackets, so that two setups are two rows and never mix."""
    if label:
        conflict = settings_conflict(con, label, jobs, retry_truncated)
        if conflict:
            raise InputError("--label", conflict, "pass another --label to store this setup apart (or run with the stored settings)")
        return label, None
    conflict = settings_conflict(con, spec, jobs, retry_truncated)
    if conflict is None:
        return spec, None
    flagged = flagged_label(spec, overrides)
    if flagged == spec or settings_conflict(con, flagged, jobs, retry_truncated):
        raise InputError("--label", conflict, "pass --label NAME to store this setup apart")
    return flagged, f"stored as {flagged!r}: {conflict}"


def request_filter(conditions: list[str] | None, variants: list[str] | None,
                   cases: list[str] | None = None) -> tuple[list[str], list]:
    """WHERE terms and parameters selecting fct_answer_requests rows (alias r) by condition, variant and case."""
    where, params = [], []
    if cases:
        where.append(f"r.case_id in ({', '.join('?' * len(cases))})")
        params += cases
    if conditions:
        where.append(f"r.condition in ({', '.join('?' * len(conditions))})")
        params += conditions
    if variants:
        where.append(f"r.prompt_variant in ({', '.join('?' * len(variants))})")
        params += variants
    return where, params


def first_questions(where: list[str], params: list, questions: int | None) -> tuple[list[str], list]:
    """The filter, narrowed to the first QUESTIONS questions it selects (by case, then question)."""
    if not questions:
        return where, params
    inner = " and ".join(where) or "true"
    return ([*where, f"r.question_id in (select r.question_id from fct_answer_requests r where {inner} "
                     f"group by r.question_id order by min(r.case_id), r.question_id limit {int(questions)})"], [*params, *params])


def answer_requests(con, spec: str, base_url: str | None = None, conditions: list[str] | None = None,
                    variants: list[str] | None = None, limit: int | None = None, concurrency: int | None = None,
                    overrides: Overrides | None = None, warning_position: str = "end", seed: int = 0,
                    retry_truncated: bool = False, label: str | None = None, cases: list[str] | None = None,
                    questions: int | None = None, retry_overflow: bool = False) -> RunSummary:
    """Ask each row of fct_answer_requests (filtered) once per sample, stored under LABEL; with
    `retry_truncated`, only the samples whose stored answer ran out of tokens, as new calls with the
    larger budget."""
    overrides = overrides or Overrides()
    require_marts(con, "fct_answer_requests", "fct_narrative_requests", "dim_questions")
    provider = make_provider(spec, base_url, overrides.transport())
    settings_for = SettingsResolver(con, "answer", overrides)
    where, params = request_filter(conditions, variants, cases)
    where, params = ["(r.narrative_model is null or r.narrative_model = ?)", *where], [spec, *params]
    # a pilot of N questions asks every selected request of each: complete full/masked pairs
    where, params = first_questions(where, params, questions)
    # hidden fields are fetched only for a simulator, into the job context; prompts never see them
    hidden = ("q.correct_answer, q.hindsight_trap, q.options_json" if isinstance(provider, SimulatedModel)
              else "null as correct_answer, null as hindsight_trap, null as options_json")
    rows = fetch_dicts(con, f"""
        select r.*, {hidden} from fct_answer_requests r inner join dim_questions q using (question_id)
        where {' and '.join(where)}
        order by r.case_id, r.question_id, r.condition, r.prompt_variant, r.visibility, r.request_id
        {'limit ' + str(int(limit)) if limit else ''}""", params)

    asked = [(row, settings_for(row)) for row in rows]
    # the label first (it decides which truncated answers a retry asks again), from every sample's settings
    label, note = choose_label(con, spec, label, overrides, [Job("answer", row["request_id"], [], row, settings=settings)
                                                             for row, settings in asked], retry_truncated)
    retry = _truncated_samples(con, label, overrides) if retry_truncated else None
    jobs = []
    for row, settings in asked:
        messages = answer_messages(row, warning_position)
        for sample in range(settings.samples):
            if retry is not None and sample not in retry.get(row["request_id"], ()):
                continue
            # a simulator draws each sample apart; sample 0 keeps the draws it always had
            context = {**row, "seed": seed if sample == 0 else f"{seed}:{sample}"}
            jobs.append(Job("answer", row["request_id"], messages, context, row["prompt_variant"],
                            warning_position if row["prompt_variant"] == "warning" else None, sample, settings))
    write = answer_writer(con, label, provider, model_spec=spec)
    summary = run_jobs(con, provider, spec, jobs, overrides.transport(), concurrency, write, overrides.batch, retry_overflow,
                       label=label)
    summary.label = label
    summary.notes += [note] if note else []
    return summary


def answer_writer(con, spec: str, provider, load_id: int | None = None, source: str | None = None,
                  model_spec: str | None = None):
    """The writer of answers to raw.responses (one row per call and request, never twice), under the
    label SPEC: used by the direct runner, by batch collection from another process, and by
    `hindsight load inspect` (which passes its log's load and file)."""
    load_ids: list[int] = [] if load_id is None else [load_id]   # a run registers with its first answer
    written = {r[0] for r in con.execute("select response_id from raw.responses where load_id in "
                                         "(select load_id from raw.loads where kind in ('answer', 'inspect'))").fetchall()}
    line = [0]

    def write(cursor, job: Job, completion: Completion) -> str:
        request = job.context
        # a call can answer a request under several labels (a relabelled setup reuses its stored calls)
        apart = f"|{spec}" if model_spec and spec != model_spec else ""
        response_id = "r_" + hashlib.sha256(f"{job.call_id}|{request['request_id']}{apart}".encode()).hexdigest()[:24]
        parsed, status = parse_answer(completion.text)
        if response_id in written:
            return status
        written.add(response_id)
        answer = parsed.get("answer") if parsed else completion.text
        answer = ("true" if answer else "false") if isinstance(answer, bool) else (None if answer is None else str(answer))
        evidence = parsed.get("evidence") if parsed else None
        if completion.truncated:
            status = "truncated"
        payload = {"call_id": job.call_id, "request_id": request["request_id"], "sample_index": job.sample,
                   "finish_reason": completion.finish_reason, "provider": provider.provider,
                   "base_url_host": base_url_host(provider.base_url), "reported_model": completion.reported_model,
                   "response_parse_status": status, "response_parser_version": RESPONSE_PARSER_VERSION,
                   "prompt_template_version": PROMPT_TEMPLATE_VERSION,
                   "narrative_model": request.get("narrative_model"), "warning_position": job.warning_position,
                   **({"settings": job.settings.output_affecting(), "model_spec": model_spec}
                      if model_spec and job.settings else {})}
        line[0] += 1
        if not load_ids:
            load_ids.append(register_run(cursor, "answer", spec))
        cursor.execute("insert into raw.responses values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            load_ids[0], source or f"runner:{spec}", line[0], response_id, request["question_id"], spec, request["condition"],
            request["visibility"], request["prompt_variant"], answer, None if evidence is None else str(evidence),
            json.dumps(payload), datetime.now(timezone.utc).replace(tzinfo=None)])
        return status

    return write


def narrative_writer(con, spec: str):
    """The writer of synthetic narratives (one per request and model)."""
    written = {r[0] for r in con.execute("select narrative_request_id from raw.synthetic_narratives where model = ?",
                                         [spec]).fetchall()}

    def write(cursor, job: Job, completion: Completion) -> None:
        if job.target_id not in written:
            written.add(job.target_id)
            cursor.execute("insert into raw.synthetic_narratives values (?, ?, ?, ?)",
                           [job.target_id, spec, completion.text.strip(), datetime.now(timezone.utc).replace(tzinfo=None)])
        return None

    return write


def generate_narratives(con, spec: str, base_url: str | None = None, limit: int | None = None,
                        concurrency: int = 8, overrides: Overrides | None = None) -> RunSummary:
    """Condition-3 synthetic narratives, one per question, scope and source, by the model that will answer."""
    overrides = overrides or Overrides()
    require_marts(con, "fct_answer_requests", "fct_narrative_requests", "dim_questions")
    provider = make_provider(spec, base_url, overrides.transport())
    settings_for = SettingsResolver(con, "narrative", overrides)
    rows = fetch_dicts(con, f"""select * from fct_narrative_requests
                                order by narrative_request_id {'limit ' + str(int(limit)) if limit else ''}""")
    # one narrative per request: a truncated one is kept (its call says so), samples do not apply
    jobs = [Job("narrative", row["narrative_request_id"], narrative_messages(row["tts_lines"]), {"tts_lines": row["tts_lines"]},
                settings=settings_for(row)) for row in rows]
    return run_jobs(con, provider, spec, jobs, overrides.transport(), concurrency, narrative_writer(con, spec),
                    overrides.batch)
