"""Runs model calls for rows of the requests marts, exactly once.

A call's id is a content hash of provider, model, base URL, rendered messages
and output-affecting settings (not retries, timeouts or keys). A call id with
a stored `ok` row is never sent again, and every result is written the moment
it arrives, so an interrupted run resumes with nothing lost or duplicated.
Calls run concurrently under a limit on one event loop; a writer thread
stores each result as it arrives, one transaction each, through a cursor of
the run's single DuckDB connection (one writing process per file).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import queue
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

from ingest.llm.prompts import PROMPT_TEMPLATE_VERSION
from ingest.llm.providers import Completion, Settings, base_url_host

RESPONSE_PARSER_VERSION = "answer-json-1"


@dataclass
class Job:
    purpose: str                 # answer | narrative | judge
    target_id: str
    messages: list[dict]
    context: dict                # what the writer (and a simulator) needs; never sent
    prompt_variant: str | None = None
    warning_position: str | None = None
    call_id: str = ""


@dataclass
class RunSummary:
    selected: int = 0
    from_cache: int = 0
    answered: int = 0
    failed: int = 0
    unparsed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)      # settings the model does not take, left out (once each)
    refused: str | None = None                          # a request parameter the API refused: the run stopped


REFUSED_CODES = ("unsupported_parameter", "unsupported_value")


def refused_parameter(error: Exception) -> str | None:
    """The API's message when it refused a request parameter with HTTP 400 (the same for every call of
    the run, so the run stops at the first); None for any other failure."""
    if getattr(error, "status_code", None) != 400:
        return None
    body = getattr(error, "body", None)
    detail = body.get("error", body) if isinstance(body, dict) else {}
    code, message = (detail or {}).get("code"), str((detail or {}).get("message") or error)
    if code in REFUSED_CODES or "Unsupported parameter" in message or "Unsupported value" in message:
        return message
    return None


def call_id(provider, model: str, base_url: str | None, messages: list[dict], settings: Settings) -> str:
    identity = {"provider": provider.provider, "model": model, "base_url": base_url, "messages": messages,
                **settings.output_affecting()}
    return hashlib.sha256(json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def parse_answer(text: str) -> tuple[dict | None, str]:
    """The {"answer", "evidence"} object, tolerating a code fence; else a parse status."""
    value, status = parse_json_object(text)
    if value is not None and "answer" not in value:
        return None, "missing_answer"
    return value, status


def parse_json_object(text: str) -> tuple[dict | None, str]:
    """The first JSON object in a reply, tolerating a code fence or chatter around it."""
    cleaned = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", text.strip())
    try:
        value = json.loads(cleaned)
    except json.JSONDecodeError:
        match = re.search(r"\{.*\}", cleaned, re.S)
        try:
            value = json.loads(match.group(0)) if match else None
        except json.JSONDecodeError:
            value = None
    if not isinstance(value, dict):
        return None, "not_json"
    return value, "ok"


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _progress(total: int):
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit="call", file=sys.stderr, disable=total < 20 or None, dynamic_ncols=True)
    except ImportError:  # pragma: no cover - tqdm ships with great-expectations
        return None


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
        cursor = self.cursor
        cursor.execute("begin transaction")
        try:
            for job, completion, record in batch:
                self._store_one(job, completion, record)
            cursor.execute("commit")
        except BaseException:
            cursor.execute("rollback")
            raise
        if self.bar is not None:
            self.bar.update(len(batch))

    def _store_one(self, job: Job, completion: Completion | None, record: dict) -> None:
        same, summary, cursor = self.groups[job.call_id], self.summary, self.cursor
        if completion:
            # one call may serve several targets whose prompts are identical
            for target in same:
                status = self.write(cursor, target, completion)
            if status is not None:
                record["parse_status"], record["parser_version"] = status, RESPONSE_PARSER_VERSION
            summary.answered += len(same)
            summary.unparsed += len(same) * (status not in (None, "ok"))
            summary.input_tokens += completion.input_tokens or 0
            summary.output_tokens += completion.output_tokens or 0
        else:
            summary.failed += len(same)
            summary.errors.append(record["error"])
        cursor.execute(f"insert into raw.llm_calls ({', '.join(record)}) values ({', '.join('?' * len(record))})",
                       list(record.values()))


async def _run(con, provider, model: str, groups: dict[str, list[Job]], settings: Settings, concurrency: int,
               write, summary: RunSummary) -> None:
    jobs = [same[0] for same in groups.values()]
    gate = asyncio.Semaphore(concurrency)
    bar = _progress(len(jobs))
    writer = _Writer(con, groups, write, summary, bar)
    writer.start()

    sent, notes = provider.arguments(settings)      # the same fields go with every call of the run
    summary.notes += [note for note in notes if note not in summary.notes]

    halted = asyncio.Event()      # set at the first refused parameter: nothing more is sent

    async def one(job: Job):
        async with gate:
            if halted.is_set():
                return None
            started, clock = _now(), time.perf_counter()
            try:
                completion = await provider.complete(job.messages, settings, job.context)
                return job, completion, None, None, started, time.perf_counter() - clock
            except Exception as error:  # the SDK has already retried; record and go on
                refused = refused_parameter(error)
                if refused:
                    halted.set()
                return job, None, f"{type(error).__name__}: {error}", refused, started, time.perf_counter() - clock

    tasks = [asyncio.ensure_future(one(job)) for job in jobs]
    try:
        for finished in asyncio.as_completed(tasks):
            result = await finished
            if result is None:
                continue
            job, completion, error, refused, started, seconds = result
            writer.items.put((job, completion, {
                "call_id": job.call_id, "purpose": job.purpose, "target_id": job.target_id,
                "provider": provider.provider, "model": model, "base_url_host": base_url_host(provider.base_url),
                "reported_model": completion.reported_model if completion else None,
                # what was sent, not what was asked: a setting the model does not take is left out
                "temperature": sent.get("temperature"), "max_tokens": settings.max_tokens,
                "settings_sent": json.dumps(sent),
                "prompt_variant": job.prompt_variant, "warning_position": job.warning_position,
                "prompt_template_version": PROMPT_TEMPLATE_VERSION,
                "response_text": completion.text if completion else None,
                "parse_status": None, "parser_version": None,
                "input_tokens": completion.input_tokens if completion else None,
                "output_tokens": completion.output_tokens if completion else None,
                "latency_ms": round(seconds * 1000, 1), "started_at": started, "finished_at": _now(),
                "status": "ok" if completion else "error", "error": error,
            }))
            if writer.failure is not None:
                raise writer.failure
            if refused and summary.refused is None:
                # every other call would be refused the same way: stop, and say so once
                summary.refused = f"{model} refused a request parameter: {refused}"
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


def run_jobs(con, provider, model: str, jobs: list[Job], settings: Settings, concurrency: int,
             write: Callable[..., str | None]) -> RunSummary:
    """Send every call not already answered, write each result as it arrives,
    and write stored results for targets that lack them (writers skip targets
    already written)."""
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        job.call_id = call_id(provider, model, provider.base_url, job.messages, settings)
        groups.setdefault(job.call_id, []).append(job)
    done = {row[0]: row[1:] for row in con.execute(
        "select call_id, response_text, reported_model from raw.llm_calls where status = 'ok'").fetchall()}
    pending = {key: same for key, same in groups.items() if key not in done}
    summary = RunSummary(selected=len(jobs), from_cache=sum(len(same) for key, same in groups.items() if key in done))
    for key, same in groups.items():
        if key in done:
            con.execute("begin transaction")
            for job in same:
                write(con, job, Completion(done[key][0], done[key][1], None, None))
            con.execute("commit")
    if pending:
        asyncio.run(_run(con, provider, model, pending, settings, concurrency, write, summary))
    return summary
