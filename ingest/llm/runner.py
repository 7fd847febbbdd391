"""Runs model calls for rows of the requests marts, exactly once.

A call is one sample of one request: its id is a content hash of the request
(target) and sample index, provider, model, base URL, rendered messages and
output-affecting settings (not retries, timeouts or keys), so two requests
with identical prompts (a full and a masked context that show the same
events) are two calls, and `--samples N` makes N. A call id with a stored
`ok` row is never sent again, and every result is written the moment it
arrives, so an interrupted run resumes with nothing lost or duplicated. A
reply that ended on the token limit is stored with parse status `truncated`. A
request that does not fit a local server's context is stored as a call with
status `context_overflow` (counted, never sent again unless asked), and a reply
to a prompt the server shortened with parse status `prompt_truncated`: neither
is ever an answer.
Calls run concurrently under a limit on one event loop; a writer thread
stores each result as it arrives, one transaction each, through a cursor of
the run's connection: the runs' store (ingest/collect), which many runs write
at once. There a run claims each call just before it sends it, so that runs
whose selections overlap send every call once between them.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import queue
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

from ingest.llm.local_servers import ContextOverflow, bad_request
from ingest.llm.prompts import PROMPT_TEMPLATE_VERSION
from ingest.llm.providers import Completion, Settings, base_url_host

# answer-json-2: of several JSON objects in a reply, the last one that carries the answer field
# (answer-json-1 took the first object, an example the model gave included)
RESPONSE_PARSER_VERSION = "answer-json-2"
NOT_ANSWERS = ("context_overflow", "prompt_truncated")    # call outcomes that are never an answer


@dataclass
class Job:
    purpose: str                 # answer | narrative | judge
    target_id: str
    messages: list[dict]
    context: dict                # what the writer (and a simulator) needs; never sent
    prompt_variant: str | None = None
    warning_position: str | None = None
    sample: int = 0              # which sample of the request this call is
    settings: Settings | None = None   # the request's sampling settings (the run's when None)
    call_id: str = ""


@dataclass
class RunSummary:
    selected: int = 0
    from_cache: int = 0
    answered: int = 0
    failed: int = 0
    unparsed: int = 0
    truncated: int = 0                                  # replies that ended on the token limit
    overflowed: int = 0                                 # requests that do not fit the context window (not sent)
    prompt_truncated: int = 0                           # replies to a prompt the server shortened (not answers)
    input_tokens: int = 0
    output_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)      # settings the model does not take, left out (once each)
    refused: str | None = None                          # a request parameter the API refused: the run stopped
    submitted: int = 0                                  # calls sent in new batches (--batch)
    in_batches: int = 0                                 # calls already waiting in a live batch
    batches: list[str] = field(default_factory=list)    # progress lines of the batches (--batch)
    label: str | None = None                            # what the answers are stored under (hindsight answer)
    elsewhere: int = 0                                  # calls another run stored or was sending (not sent here)


REFUSED_CODES = ("unsupported_parameter", "unsupported_value")


def missing_endpoint(error: Exception, provider) -> str | None:
    """A server without the endpoint the run uses (HTTP 404 on /v1/responses): every call would fail the same way."""
    if getattr(error, "status_code", None) == 404 and getattr(provider, "endpoint", "") == "/v1/responses":
        return f"the server at {provider.base_url} has no {provider.endpoint} (HTTP 404); use --api chat"
    return None


def refused_parameter(error: Exception) -> str | None:
    """The API's message when it refused a request parameter with HTTP 400 (the same for every call of
    the run, so the run stops at the first); None for any other failure."""
    detail, message = bad_request(error) or ({}, "")
    if detail.get("code") in REFUSED_CODES or "Unsupported parameter" in message or "Unsupported value" in message:
        return message
    # Anthropic names the sampling field it refuses in an invalid_request_error
    if detail.get("type") == "invalid_request_error" and SAMPLING_FIELD.search(message):
        return message
    return None


SAMPLING_FIELD = re.compile(r"\b(temperature|thinking|budget_tokens|max_tokens|top_[kp])\b")


def _digest(identity: dict) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def call_id(provider, model: str, base_url: str | None, job: Job, settings: Settings) -> str:
    """One sample of one request with these messages and output-affecting settings."""
    return _digest({"provider": provider.provider, "model": model, "base_url": base_url, "messages": job.messages,
                    "request": job.target_id, "sample": job.sample, **settings.output_affecting()})


def legacy_call_id(provider, model: str, base_url: str | None, job: Job, settings: Settings) -> str:
    """The id calls had before a call was one sample of one request (identical prompts shared a call):
    a stored reply under it still answers sample 0, so an older warehouse is not asked again."""
    return _digest({"provider": provider.provider, "model": model, "base_url": base_url, "messages": job.messages,
                    **settings.output_affecting()})


def parse_answer(text: str) -> tuple[dict | None, str]:
    """The {"answer", "evidence"} object, tolerating a code fence; else a parse status."""
    value, status = parse_json_object(text, "answer")
    if value is not None and "answer" not in value:
        return None, "missing_answer"
    return value, status


def json_objects(text: str) -> list[dict]:
    """Every JSON object in a reply, in order, wherever it stands (a code fence or chatter around it)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while (at := text.find("{", at)) != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at += 1
            continue
        if isinstance(value, dict):
            found.append(value)
        at = end
    return found


def parse_json_object(text: str, field: str | None = None) -> tuple[dict | None, str]:
    """The reply's JSON object: the last one that carries FIELD (a model may show an example object
    before its own), else the last one; a reply with none is `not_json`."""
    objects = json_objects(text)
    if not objects:
        return None, "not_json"
    carrying = [value for value in objects if field in value] if field else []
    return (carrying or objects)[-1], "ok"


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _progress(total: int):
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit="call", file=sys.stderr, disable=total < 20 or None, dynamic_ncols=True)
    except ImportError:  # pragma: no cover - tqdm ships with great-expectations
        return None


class RowBuffer:
    """A cursor that holds single-row `insert ... values (?, ...)` statements and writes each table's
    rows as one multi-row insert when flushed (DuckDB runs one statement of many rows far faster than
    many of one); any other statement flushes first, so reads see every row written before them."""

    def __init__(self, cursor):
        self.cursor, self.rows = cursor, {}

    def execute(self, sql: str, params=None):
        head, values = (sql.rsplit(" values ", 1) + [""])[:2]
        if params is not None and head.lstrip().lower().startswith("insert into") and values.strip().startswith("("):
            self.rows.setdefault((head, values.strip()), []).append(list(params))
            return self
        self.flush()
        return self.cursor.execute(sql, params or [])

    def flush(self) -> None:
        for (head, values), rows in self.rows.items():
            self.cursor.execute(f"{head} values {', '.join([values] * len(rows))}", [v for row in rows for v in row])
        self.rows.clear()


class _Writer(threading.Thread):
    """Writes each result as it arrives, in its own transaction, on a cursor of
    the run's connection, so the event loop keeps its requests in flight."""

    def __init__(self, con, groups, write, summary, bar):
        super().__init__(daemon=True)
        self.cursor, self.groups, self.write, self.summary, self.bar = con.cursor(), groups, write, summary, bar
        self.items: queue.Queue = queue.Queue()
        self.failure: BaseException | None = None

    def run(self) -> None:
        finished = False
        while not finished:
            # whatever has arrived since the last commit goes into the next one: no
            # waiting, so every result is written as soon as the writer is free
            batch = [self.items.get()]
            while batch[-1] is not None and not self.items.empty() and len(batch) < 200:
                batch.append(self.items.get_nowait())
            finished = batch[-1] is None
            batch = [item for item in batch if item is not None]
            if batch and self.failure is None:
                try:
                    self._store(batch)
                except BaseException as error:  # surfaced to the caller after the run
                    self.failure = error

    def _store(self, batch: list) -> None:
        self.cursor.execute("begin transaction")
        inserts = RowBuffer(self.cursor)
        try:
            for job, completion, record in batch:
                self._store_one(inserts, job, completion, record)
            inserts.flush()
            if hasattr(self.cursor, "stored"):       # a run's store: its claims freed, its progress counted
                self.cursor.stored([record for _, _, record in batch])
            self.cursor.execute("commit")
        except BaseException:
            self.cursor.execute("rollback")
            raise
        if self.bar is not None:
            self.bar.update(len(batch))

    def _store_one(self, cursor, job: Job, completion: Completion | None, record: dict) -> None:
        store_result(cursor, self.groups[job.call_id], completion, record, self.write, self.summary)


def store_result(cursor, same: list[Job], completion: Completion | None, record: dict, write, summary: RunSummary) -> None:
    """One call's result: its targets written by the command's writer, then its ledger row (the one
    write path of direct and batch calls)."""
    if completion and completion.finish_reason == "prompt_truncated":
        # the server answered a shortened prompt: kept in the ledger, never an answer
        record["parse_status"], record["parser_version"] = "prompt_truncated", RESPONSE_PARSER_VERSION
        summary.prompt_truncated += len(same)
        summary.input_tokens += completion.input_tokens or 0
        summary.output_tokens += completion.output_tokens or 0
    elif completion:
        for target in same:
            status = write(cursor, target, completion) if write else None
        if completion.truncated:
            status = "truncated"      # whatever the writer made of it, the model ran out of tokens
        if status is not None:
            record["parse_status"], record["parser_version"] = status, RESPONSE_PARSER_VERSION
        summary.answered += len(same)
        summary.truncated += len(same) * completion.truncated
        summary.unparsed += len(same) * (status not in (None, "ok", "truncated"))
        summary.input_tokens += completion.input_tokens or 0
        summary.output_tokens += completion.output_tokens or 0
    elif record["status"] == "context_overflow":
        summary.overflowed += len(same)
    else:
        summary.failed += len(same)
        summary.errors.append(record["error"])
    cursor.execute(f"insert into raw.llm_calls ({', '.join(record)}) values ({', '.join('?' * len(record))})",
                   list(record.values()))


def ledger_record(job: Job, completion: Completion | None, error: str | None, provider: str, model: str,
                  host: str | None, sent: dict, started: datetime, seconds: float | None, batch_key: str | None = None,
                  status: str | None = None) -> dict:
    """raw.llm_calls' row for one call: what was sent (not what was asked: a setting the model does
    not take is left out, a budget capped to the context window is the cap), what came back, and how
    long it took."""
    if completion and completion.sent_max_tokens is not None:
        sent = {key: value for key, value in sent.items() if key != "max_completion_tokens"} | {"max_tokens": completion.sent_max_tokens}
    return {
        "call_id": job.call_id, "purpose": job.purpose, "target_id": job.target_id,
        "provider": provider, "model": model, "base_url_host": host,
        "reported_model": completion.reported_model if completion else None,
        "temperature": sent.get("temperature"), "max_tokens": job.settings.max_tokens if job.settings else None,
        "settings_sent": json.dumps(sent), "sample_index": job.sample,
        "sampling_profile": job.settings.profile if job.settings else None,
        "finish_reason": completion.finish_reason if completion else None,
        "reasoning_text": completion.reasoning_text if completion else None,
        "prompt_variant": job.prompt_variant, "warning_position": job.warning_position,
        "prompt_template_version": PROMPT_TEMPLATE_VERSION,
        "response_text": completion.text if completion else None,
        "parse_status": None, "parser_version": None,
        "input_tokens": completion.input_tokens if completion else None,
        "output_tokens": completion.output_tokens if completion else None,
        "latency_ms": None if seconds is None else round(seconds * 1000, 1), "started_at": started, "finished_at": _now(),
        "status": status or ("ok" if completion else "error"), "error": error, "batch_key": batch_key,
    }


DEFAULT_CONCURRENCY = 8


async def _run(con, provider, model: str, groups: dict[str, list[Job]], concurrency: int | None,
               write, summary: RunSummary, claim: Callable[[str], bool] | None = None) -> None:
    """Send GROUPS' calls, CONCURRENCY at a time; with CLAIM (a run's store), each only once this run
    holds it: two runs whose selections overlap send each call once between them."""
    jobs = [same[0] for same in groups.values()]
    if hasattr(provider, "prepare"):
        try:
            await provider.prepare()    # a local server's context window and slots, asked once
        except BaseException:           # nothing listens there, say: no call was made
            await provider.close()
            raise
    # a local server queues what its slots cannot take, and the queued wait counts toward each timeout
    slots = provider.default_concurrency() if hasattr(provider, "default_concurrency") else None
    gate = asyncio.Semaphore(concurrency or slots or DEFAULT_CONCURRENCY)
    bar = _progress(len(jobs))
    writer = _Writer(con, groups, write, summary, bar)
    writer.start()

    halted = asyncio.Event()      # set at the first refused parameter: nothing more is sent

    async def one(job: Job):
        async with gate:
            if halted.is_set():
                return None
            if claim is not None and not claim(job.call_id):
                summary.elsewhere += len(groups[job.call_id])    # another run stored it, or is sending it now
                if bar is not None:
                    bar.update(1)
                return None
            started, clock = _now(), time.perf_counter()
            try:
                completion = await provider.complete(job.messages, job.settings, job.context)
                return job, completion, None, None, started, time.perf_counter() - clock
            except ContextOverflow as overflow:     # counted, not retried: it cannot fit this server
                return job, None, f"ContextOverflow: {overflow}", "context_overflow", started, time.perf_counter() - clock
            except Exception as error:  # the SDK has already retried; record and go on
                refused = refused_parameter(error) or missing_endpoint(error, provider)
                if refused:
                    halted.set()
                return job, None, f"{type(error).__name__}: {error}", refused, started, time.perf_counter() - clock

    tasks: list[asyncio.Future] = []

    async def results():
        # the first call goes alone: a refused parameter or a missing endpoint costs one call, not a
        # concurrency's worth (every other call would fail the same way)
        tasks.append(asyncio.ensure_future(one(jobs[0])))
        yield await tasks[0]
        tasks.extend(asyncio.ensure_future(one(job)) for job in jobs[1:])
        for finished in asyncio.as_completed(tasks[1:]):
            yield await finished

    try:
        async for result in results():
            if result is None:
                continue
            job, completion, error, refused, started, seconds = result
            overflow = refused == "context_overflow"
            refused = None if overflow else refused
            writer.items.put((job, completion, ledger_record(
                job, completion, error, provider.provider, model, base_url_host(provider.base_url),
                provider.arguments(job.settings)[0], started, seconds, status="context_overflow" if overflow else None)))
            if writer.failure is not None:
                raise writer.failure
            if refused and summary.refused is None:
                # every other call would be refused the same way: stop, and say so once
                summary.refused = refused if refused.startswith("the server at") else f"{model} refused a request parameter: {refused}"
    finally:
        for task in tasks:
            task.cancel()
        writer.items.put(None)      # everything received so far is written before we return
        await asyncio.get_running_loop().run_in_executor(None, writer.join)
        await provider.close()      # inside the loop, before asyncio.run closes it
        if bar is not None:
            bar.close()
    if writer.failure is not None:
        raise writer.failure


def _interruptible() -> None:
    """A run started in the background by a shell without job control inherits SIGINT ignored (and
    Python then installs no handler of its own): an explicit interrupt (kill -INT, Ctrl-C) still has
    to stop it cleanly, with every reply received so far written, so that the next run resumes."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def run_jobs(con, provider, model: str, jobs: list[Job], settings: Settings, concurrency: int | None,
             write: Callable[..., str | None], batch=None, retry_overflow: bool = False, label: str | None = None) -> RunSummary:
    """Send every call not already answered, write each result as it arrives,
    and write stored results for targets that lack them (writers skip targets
    already written). `settings` serve jobs that carry none of their own. With
    `batch` (ingest.llm.batch.BatchOptions) the pending calls go through the
    provider's batch API instead: finished batches are collected first, and
    only calls in no live batch are submitted. A call that overflowed the context window is done
    too, unless `retry_overflow` (after the server's context was raised). A call's identity is the
    MODEL's; the ledger names it by LABEL when one is given (hindsight answer --label)."""
    summary = RunSummary(selected=len(jobs))
    for job in jobs:
        job.settings = job.settings or settings
    for job_settings in {job.settings for job in jobs}:
        # worked out before anything is sent: a setting the API would refuse stops here
        summary.notes += [note for note in provider.arguments(job_settings)[1] if note not in summary.notes]
    finished = ("ok",) if retry_overflow else ("ok", "context_overflow")
    done = {row[0]: row[1:] for row in con.execute(
        "select call_id, response_text, reported_model, finish_reason, status, parse_status from raw.llm_calls "
        f"where status in ({', '.join('?' * len(finished))}) order by status = 'ok'", list(finished)).fetchall()}
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        job.call_id = call_id(provider, model, provider.base_url, job, job.settings)
        if job.call_id not in done and job.sample == 0:
            legacy = legacy_call_id(provider, model, provider.base_url, job, job.settings)
            job.call_id = legacy if legacy in done else job.call_id
        groups.setdefault(job.call_id, []).append(job)
    pending = {key: same for key, same in groups.items() if key not in done}
    summary.from_cache = sum(len(same) for key, same in groups.items() if key in done)
    cached = [(key, same) for key, same in groups.items() if key in done]
    if cached:
        # stored replies for targets that lack them (writers skip the rest), in one transaction
        con.execute("begin transaction")
        buffer = RowBuffer(con)
        for key, same in cached:
            if done[key][3] != "ok" or done[key][4] in NOT_ANSWERS:
                continue            # an overflow or a shortened prompt has no answer to write
            for job in same:
                write(buffer, job, Completion(done[key][0], done[key][1], None, None, done[key][2]))
        buffer.flush()
        con.execute("commit")
    run = getattr(con, "run", None)
    if run is not None:
        run.plan(len(pending), summary.from_cache, jobs[0].purpose if jobs else None, label or model)
    if batch is not None:
        # the batch path is handed in by the command (ingest.llm.batch.BatchOptions), so that the
        # runner, which the batch path builds on, never imports it back
        batch.run(con, provider, label or model, jobs, pending, done, write, summary)
    elif pending:
        _interruptible()
        claim = (lambda call_id: run.claim(call_id, finished)) if run is not None else None
        asyncio.run(_run(con, provider, label or model, pending, concurrency, write, summary, claim))
    return summary
