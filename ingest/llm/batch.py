"""Batch collection: OpenAI Batch (Files + Batches) and Anthropic Message Batches behind every runner
command (`--batch`), and `hindsight batches` to list, collect and cancel them.

Nothing is lost or duplicated across crashes. A batch row and the calls in it are committed before
anything is sent (status `preparing`); the input file id and the provider's batch id are stored the
moment they exist. A batch still `preparing` on a later run is found again at the provider (OpenAI:
the input file by its name and the batch by the metadata, both carrying batch_key; Anthropic, whose
batches carry no metadata: by creation time and size), or, when it never reached the provider,
abandoned so that its calls are pending again. Results are matched by custom_id = call id and stored
through the runner's write path (ledger, parse and truncation status, the command's writer); a result
for a call already stored is counted and ignored; errored, expired and cancelled items become pending
again and go into a later batch, never into two live batches at once. Keys come from the environment;
the input JSONL is built in memory and never written to disk.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from ingest.errors import InputError
from ingest.llm.providers import AnthropicMessages, Completion, OpenAIChat, OpenAIResponses, Settings, api_key_from_env, base_url_host
from ingest.llm.runner import Job, RowBuffer, RunSummary, ledger_record, store_result

# the providers' limits per batch: requests and input bytes (OpenAI: 50,000 and 200 MB, one model and
# endpoint per file, a 24 h window; Anthropic: 100,000 requests or 256 MB, results kept 29 days)
LIMITS = {"openai": (50_000, 200 * 2**20), "anthropic": (100_000, 256 * 2**20)}
ENDED = ("completed", "ended", "expired", "cancelled", "failed")
CLOSED = ("collected", "abandoned")
# fault injection for the crash tests: before_upload | after_upload | after_create | during_collect
CRASH_ENV = "HINDSIGHT_BATCH_CRASH"
COMMIT_EVERY_ENV = "HINDSIGHT_BATCH_COMMIT_EVERY"   # results stored per transaction (default 500)


@dataclass(frozen=True)
class BatchOptions:
    """`--batch` and its flags; the runner sends a command's pending calls through `run`."""
    wait: bool = False              # poll until every batch of the command has been collected
    size: int | None = None         # requests per batch (default: the provider's limit)
    poll_interval: float = 30.0

    def run(self, con, provider, model: str, jobs: list[Job], pending: dict[str, list[Job]], done: dict, write,
            summary: RunSummary) -> None:
        run_batched(con, provider, model, jobs, pending, done, write, summary, self)


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _crash_point(name: str) -> None:
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


class _Client:
    """The provider's synchronous SDK client for its batch endpoints (the key from the environment)."""

    def __init__(self, provider: str, base_url: str | None, timeout: float = 120.0, max_retries: int = 5):
        self.provider, self.base_url = provider, base_url
        if provider == "openai":
            import openai

            self.sdk = openai.OpenAI(api_key=api_key_from_env("OPENAI_API_KEY", base_url), base_url=base_url,
                                     timeout=timeout, max_retries=max_retries)
        elif provider == "anthropic":
            import anthropic

            self.sdk = anthropic.Anthropic(api_key=api_key_from_env("ANTHROPIC_API_KEY", base_url), base_url=base_url,
                                           timeout=timeout, max_retries=max_retries)
        else:
            raise InputError("--batch", f"{provider} has no batch API", "use --batch with openai:… or anthropic:… models")

    def require_batch_api(self) -> None:
        """One cheap listing of the batch endpoints before anything is stored: an OpenAI-compatible
        server that serves completions only (vLLM, llama.cpp, Ollama, most proxies) answers 404 or 405
        there, which stops the run with one line instead of a traceback halfway through a submission."""
        endpoint = self.base_url or ("https://api.openai.com/v1" if self.provider == "openai" else "https://api.anthropic.com")
        if self.provider == "openai":
            import openai

            probes = [("the Files API (GET /files)", lambda: self.sdk.files.list(purpose="batch")),
                      ("the Batch API (GET /batches)", lambda: self.sdk.batches.list(limit=1))]
            missing = (openai.NotFoundError, openai.APIStatusError)
        else:
            import anthropic

            probes = [("the Message Batches API (GET /v1/messages/batches)", lambda: self.sdk.messages.batches.list(limit=1))]
            missing = (anthropic.NotFoundError, anthropic.APIStatusError)
        for what, probe in probes:
            try:
                probe()
            except missing as error:
                if error.status_code not in (404, 405, 501):
                    raise
                raise InputError("--batch", f"{endpoint} does not serve {what}: it answered HTTP {error.status_code}, so batch "
                                            "collection cannot run there",
                                 "drop --batch to ask the calls one by one (--concurrency sets how many at a time), or point "
                                 "--base-url at a provider that has the Batch API") from None

    # -- submission --------------------------------------------------------------------------------
    def send(self, con, row: dict, payload) -> dict:
        """Bring a `preparing` batch to the provider, or find it there; the fields to store."""
        return self._send_openai(con, row, payload) if self.provider == "openai" else self._send_anthropic(con, row, payload)

    def _send_openai(self, con, row: dict, payload: bytes | None) -> dict:
        key, file_id = row["batch_key"], row["input_file_id"]
        if file_id is None:
            file_id = next((f.id for f in self.sdk.files.list(purpose="batch") if f.filename == f"{key}.jsonl"), None)
        if file_id is None:
            if payload is not None:
                _crash_point("before_upload")
            if payload is None:
                return {"status": "abandoned", "error": "never uploaded (the process stopped first); its calls are pending again"}
            file_id = self.sdk.files.create(file=(f"{key}.jsonl", payload), purpose="batch").id
            _crash_point("after_upload")
        _update(con, key, input_file_id=file_id)
        found = next((b for b in self.sdk.batches.list(limit=100) if (b.metadata or {}).get("hindsight_batch_key") == key), None)
        if found is None:
            found = self.sdk.batches.create(input_file_id=file_id, endpoint=row["endpoint"], completion_window="24h",
                                            metadata={"hindsight_batch_key": key})
            _crash_point("after_create")
        return {"batch_id": found.id, "status": found.status, "provider_status": found.status}

    def _send_anthropic(self, con, row: dict, payload: list | None) -> dict:
        known = {r[0] for r in con.execute("select batch_id from raw.batches where batch_id is not null").fetchall()}
        since = row["submitted_at"].timestamp() - 120
        for batch in self.sdk.messages.batches.list(limit=100):
            counts = batch.request_counts
            total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
            created = batch.created_at.replace(tzinfo=timezone.utc).timestamp() if batch.created_at.tzinfo is None \
                else batch.created_at.timestamp()
            if batch.id not in known and created >= since and total == row["n_requests"]:
                return {"batch_id": batch.id, "status": batch.processing_status, "provider_status": batch.processing_status}
        if payload is None:
            return {"status": "abandoned", "error": "never created (the process stopped first); its calls are pending again"}
        _crash_point("before_upload")
        batch = self.sdk.messages.batches.create(requests=payload)
        _crash_point("after_create")
        return {"batch_id": batch.id, "status": batch.processing_status, "provider_status": batch.processing_status}

    # -- polling and results -----------------------------------------------------------------------
    def poll(self, batch_id: str) -> dict:
        if self.provider == "openai":
            b = self.sdk.batches.retrieve(batch_id)
            counts = b.request_counts
            return {"status": b.status, "provider_status": b.status,
                    "n_succeeded": counts.completed if counts else None, "n_errored": counts.failed if counts else None}
        b = self.sdk.messages.batches.retrieve(batch_id)
        c = b.request_counts
        status = {"canceling": "cancelling"}.get(b.processing_status, b.processing_status)
        return {"status": status, "provider_status": b.processing_status, "n_succeeded": c.succeeded,
                "n_errored": c.errored, "n_expired": c.expired, "n_cancelled": c.canceled}

    def results(self, row: dict, parse):
        """(custom_id, outcome, Completion or None, error text or None) for each item of an ended batch."""
        if self.provider == "openai":
            batch = self.sdk.batches.retrieve(row["batch_id"])
            for file_id in (batch.output_file_id, batch.error_file_id):
                if not file_id:
                    continue
                for line in self.sdk.files.content(file_id).text.splitlines():
                    if not line.strip():
                        continue
                    item = json.loads(line)
                    response, error = item.get("response") or {}, item.get("error") or {}
                    if response.get("status_code") == 200:
                        yield item["custom_id"], "stored", parse(response["body"]), None
                    elif error.get("code") in ("batch_expired", "batch_cancelled"):
                        yield item["custom_id"], error["code"].removeprefix("batch_"), None, error.get("message")
                    else:
                        detail = (response.get("body") or {}).get("error") or error
                        yield item["custom_id"], "errored", None, f"HTTP {response.get('status_code')}: {detail.get('message')}"
            return
        for item in self.sdk.messages.batches.results(row["batch_id"]):
            result = item.result
            if result.type == "succeeded":
                yield item.custom_id, "stored", result.message, None
            elif result.type == "errored":
                yield item.custom_id, "errored", None, f"{result.error.error.type}: {result.error.error.message}"
            else:
                yield item.custom_id, {"canceled": "cancelled"}.get(result.type, result.type), None, None

    def cancel(self, batch_id: str) -> str:
        if self.provider == "openai":
            return self.sdk.batches.cancel(batch_id).status
        return self.sdk.messages.batches.cancel(batch_id).processing_status


def _update(con, key: str, **fields) -> None:
    fields["updated_at"] = _now()
    con.execute(f"update raw.batches set {', '.join(f'{name} = ?' for name in fields)} where batch_key = ?",
                [*fields.values(), key])


def _rows(con, where: str, params=()) -> list[dict]:
    cursor = con.execute(f"select * from raw.batches where {where} order by submitted_at, batch_key", list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


# -- submission -----------------------------------------------------------------------------------
def _lines(provider, jobs: list[Job]) -> list[tuple[str, object, int]]:
    """(call id, request line, its size in bytes) per call, in the provider's batch format (OpenAI: the
    encoded JSONL line itself, Anthropic: the request object the SDK sends)."""
    lines = []
    for job in jobs:
        body = provider.body(job.messages, job.settings)
        if provider.provider == "openai":
            line = (json.dumps({"custom_id": job.call_id, "method": "POST", "url": provider.endpoint, "body": body},
                               ensure_ascii=False) + "\n").encode()
            lines.append((job.call_id, line, len(line)))
        else:
            line = {"custom_id": job.call_id, "params": body}
            lines.append((job.call_id, line, len(json.dumps(line, ensure_ascii=False).encode()) + 1))
    return lines


def _chunks(lines: list, max_requests: int, max_bytes: int):
    chunk, size = [], 0
    for entry in lines:
        if chunk and (len(chunk) == max_requests or size + entry[2] > max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append(entry)
        size += entry[2]
    if chunk:
        yield chunk


# what a writer needs of a call when `hindsight batches collect` stores it from another process
KEPT_CONTEXT = ("request_id", "question_id", "condition", "visibility", "prompt_variant", "narrative_model",
                "kind", "response_id", "full_response_id", "masked_response_id", "case",
                # HindsightBench replies: the call's position, and a re-probe's set and temperature
                "hb_kind", "arm", "decision_date", "replicate", "sample", "probe_set", "temperature")


def submit(con, client: _Client, provider, model: str, jobs: list[Job], options: BatchOptions) -> int:
    """Write each chunk's batch row and calls in one transaction, then send it; the calls submitted."""
    max_requests, max_bytes = LIMITS[provider.provider]
    by_call = {job.call_id: job for job in jobs}
    sent = 0
    for chunk in _chunks(_lines(provider, jobs), min(max_requests, options.size or max_requests), max_bytes):
        key, now = uuid.uuid4().hex, _now()
        con.execute("begin transaction")
        # inside the transaction (the store's write lock): another process may have batched or stored
        # some of these calls since they were chosen, and none is ever submitted twice
        taken = live_calls(con, model) | {r[0] for r in con.execute("select call_id from raw.llm_calls where status = 'ok'").fetchall()}
        chunk = [entry for entry in chunk if entry[0] not in taken]
        if not chunk:
            con.execute("commit")
            continue
        chunk_jobs = [by_call[call_id] for call_id, _, _ in chunk]
        con.execute("insert into raw.batches (batch_key, provider, model, base_url, base_url_host, endpoint, purpose, "
                    "n_requests, input_bytes, status, submitted_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, 'preparing', ?, ?)",
                    [key, provider.provider, model, provider.base_url, base_url_host(provider.base_url), provider.endpoint,
                     chunk_jobs[0].purpose, len(chunk), sum(size for _, _, size in chunk), now, now])
        inserts = RowBuffer(con)
        for job in chunk_jobs:
            inserts.execute("insert into raw.batch_calls values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null)", [
                key, job.call_id, job.purpose, job.target_id, job.sample, job.prompt_variant, job.warning_position,
                job.settings.profile, json.dumps(provider.arguments(job.settings)[0]), job.settings.max_tokens,
                json.dumps({k: v for k, v in job.context.items() if k in KEPT_CONTEXT}, default=str)])
        inserts.flush()
        con.execute("commit")
        payload = (b"".join(line for _, line, _ in chunk) if provider.provider == "openai"
                   else [line for _, line, _ in chunk])
        _update(con, key, **client.send(con, _rows(con, "batch_key = ?", [key])[0], payload))
        sent += len(chunk)
    return sent


# -- collection -----------------------------------------------------------------------------------
def _stored_jobs(con, key: str, settings_by_call: dict) -> dict[str, list[Job]]:
    """The batch's calls as jobs a writer can take (from raw.batch_calls, for another process)."""
    jobs = {}
    for call_id, purpose, target, sample, variant, position, profile, sent, max_tokens, context in con.execute(
            """select call_id, purpose, target_id, sample_index, prompt_variant, warning_position, sampling_profile,
                      settings_sent, max_tokens, context from raw.batch_calls where batch_key = ?""", [key]).fetchall():
        job = Job(purpose, target, [], json.loads(context), variant, position, sample,
                  Settings(max_tokens=max_tokens or 0, profile=profile), call_id)
        settings_by_call[call_id] = json.loads(sent) if sent else {}
        jobs[call_id] = [job]
    return jobs


def collect_batch(con, client: _Client, row: dict, writers: dict, jobs_by_call: dict[str, list[Job]],
                  summary: RunSummary) -> None:
    """Store every result of an ended batch exactly once, a few hundred results per transaction."""
    per_commit = int(os.environ.get(COMMIT_EVERY_ENV, 500))
    # the provider class that built the batch's requests reads its replies
    reader = {"/v1/chat/completions": OpenAIChat, "/v1/responses": OpenAIResponses}.get(row["endpoint"], AnthropicMessages)
    sent_by_call: dict[str, dict] = {}
    stored_jobs = _stored_jobs(con, row["batch_key"], sent_by_call)
    done = {r[0] for r in con.execute("select call_id from raw.llm_calls where status = 'ok'").fetchall()}
    counts = {"stored": 0, "duplicate": 0}
    results = client.results(row, reader.parse)
    finished, first = False, True
    while not finished:
        chunk = []
        for item in results:
            chunk.append(item)
            if len(chunk) == per_commit:
                break
        finished = len(chunk) < per_commit
        con.execute("begin transaction")
        inserts = RowBuffer(con)
        outcomes = []
        for call_id, outcome, reply, error in chunk:
            same = jobs_by_call.get(call_id) or stored_jobs.get(call_id)
            if same is None:
                continue        # not one of ours (cannot happen with custom_id = call id)
            if outcome == "stored" and call_id in done:
                outcome = "duplicate"
            elif outcome in ("stored", "errored"):
                completion: Completion | None = reader.completion(reply) if reply is not None else None
                record = ledger_record(same[0], completion, error, row["provider"], row["model"], row["base_url_host"],
                                       sent_by_call.get(call_id, {}), row["submitted_at"], None, row["batch_key"])
                store_result(inserts, same, completion, record, writers.get(same[0].purpose), summary)
                if completion:
                    done.add(call_id)
            counts[outcome] = counts.get(outcome, 0) + 1
            outcomes.append((call_id, outcome))
        inserts.flush()
        if outcomes:
            # one statement per call, in DuckDB's dialect and SQLite's (the runs' store) alike
            con.executemany("update raw.batch_calls set outcome = ? where batch_key = ? and call_id = ?",
                            [(outcome, row["batch_key"], call_id) for call_id, outcome in outcomes])
        con.execute("commit")
        if first and outcomes:
            _crash_point("during_collect")
            first = False
    con.execute("begin transaction")
    # an item the provider did not report (a cancelled or failed batch) is pending again
    con.execute("update raw.batch_calls set outcome = 'missing' where batch_key = ? and outcome is null", [row["batch_key"]])
    _update(con, row["batch_key"], status="collected", collected_at=_now(), n_stored=counts["stored"],
            n_duplicates=counts["duplicate"], n_errored=counts.get("errored", 0), n_expired=counts.get("expired", 0),
            n_cancelled=counts.get("cancelled", 0), n_succeeded=counts["stored"] + counts["duplicate"])
    con.execute("commit")


def collect(con, model: str | None, writers: dict, jobs_by_call: dict[str, list[Job]], summary: RunSummary,
            purposes: set[str] | None = None, clients: dict | None = None) -> list[dict]:
    """Resume `preparing` batches, poll live ones and collect ended ones (of one model, or all); the
    batches still open afterwards."""
    clients = {} if clients is None else clients
    where, params = f"status not in ({', '.join(repr(s) for s in CLOSED)})", []
    if model is not None:
        where, params = where + " and model = ?", [model]
    open_rows = []
    for row in _rows(con, where, params):
        if purposes and row["purpose"] not in purposes:
            continue
        client = clients.setdefault((row["provider"], row["base_url"]), _Client(row["provider"], row["base_url"]))
        if row["status"] == "preparing":
            _update(con, row["batch_key"], **client.send(con, row, None))
        row = _rows(con, "batch_key = ?", [row["batch_key"]])[0]
        if row["status"] in CLOSED:
            continue
        if row["status"] not in ENDED:
            _update(con, row["batch_key"], **client.poll(row["batch_id"]))
            row = _rows(con, "batch_key = ?", [row["batch_key"]])[0]
        if row["status"] in ENDED:
            run = getattr(con, "run", None)
            # one process collects a batch at a time (another's claim on it: left to that one)
            if run is None or run.claim(f"batch:{row['batch_key']}"):
                collect_batch(con, client, row, writers, jobs_by_call, summary)
        else:
            open_rows.append(row)
    return open_rows


def live_calls(con, model: str) -> set[str]:
    """Calls in a batch not yet collected: never submitted again while it lives."""
    return {r[0] for r in con.execute(f"""
        select calls.call_id from raw.batch_calls as calls inner join raw.batches using (batch_key)
        where raw.batches.model = ? and raw.batches.status not in ({', '.join(repr(s) for s in CLOSED)})""",
                                      [model]).fetchall()}


def progress_line(row: dict) -> str:
    age = (_now() - row["submitted_at"]).total_seconds()
    counts = ", ".join(f"{row[name] or 0} {label}" for name, label in (
        ("n_succeeded", "succeeded"), ("n_errored", "errored"), ("n_expired", "expired"), ("n_cancelled", "cancelled")))
    return f"batch {row['batch_id'] or row['batch_key'][:12]} ({row['provider']}, {row['purpose']}): {row['status']}, " \
           f"{row['n_requests']} requests, {counts}; {age / 60:.0f} min old"


def run_batched(con, provider, model: str, jobs: list[Job], pending: dict[str, list[Job]], done: dict, write,
                summary: RunSummary, options: BatchOptions) -> None:
    """`--batch`: collect what has finished, submit the calls in no live batch, optionally wait."""
    if provider.provider not in LIMITS:
        raise InputError("--batch", f"{provider.provider} models are answered directly",
                         "use --batch with openai:… or anthropic:… models")
    by_call: dict[str, list[Job]] = {}
    for job in jobs:
        by_call.setdefault(job.call_id, []).append(job)
    purposes = {job.purpose for job in jobs}
    writers = {purpose: write for purpose in purposes}
    clients = {(provider.provider, provider.base_url): _Client(provider.provider, provider.base_url)}
    client = clients[(provider.provider, provider.base_url)]
    client.require_batch_api()
    collect(con, model, writers, by_call, summary, purposes, clients)
    live = live_calls(con, model)
    summary.in_batches = sum(1 for call_id in pending if call_id in live)
    summary.submitted = _submit_fresh(con, client, provider, model, pending, live, options, retry_errored=True)
    while True:
        open_rows = [row for row in _rows(con, f"model = ? and status not in ({', '.join(repr(s) for s in CLOSED)})", [model])
                     if row["purpose"] in purposes]
        summary.batches = [progress_line(row) for row in open_rows]
        if not options.wait or not open_rows:
            return
        for line in summary.batches:
            print(f"  {line}", file=sys.stderr, flush=True)
        time.sleep(options.poll_interval)
        collect(con, model, writers, by_call, summary, purposes, clients)
        # expired, cancelled or unreported items go into a new batch while we wait; errored ones wait for
        # the next run of the command (the same request would most likely fail the same way)
        summary.submitted += _submit_fresh(con, client, provider, model, pending, live_calls(con, model), options,
                                           retry_errored=False)


def _submit_fresh(con, client, provider, model: str, pending: dict[str, list[Job]], live: set[str],
                  options: BatchOptions, retry_errored: bool) -> int:
    """Submit the pending calls that are neither stored nor in a live batch."""
    stored = {r[0] for r in con.execute("select call_id from raw.llm_calls where status = 'ok'").fetchall()}
    errored = set() if retry_errored else {r[0] for r in con.execute(
        "select call_id from raw.batch_calls where outcome = 'errored'").fetchall()}
    skip = stored | live | errored
    fresh = [same[0] for call_id, same in pending.items() if call_id not in skip]
    return submit(con, client, provider, model, fresh, options) if fresh else 0


def cancel(con, batch: str) -> str:
    """Ask the provider to cancel a batch (by its id or our key); collect it later as usual."""
    rows = _rows(con, "batch_id = ? or batch_key = ?", [batch, batch])
    if not rows:
        raise InputError("batch", f"no batch {batch!r} in the warehouse", "see `hindsight batches` for the ids")
    row = rows[0]
    if row["status"] in CLOSED or row["batch_id"] is None:
        raise InputError("batch", f"batch {batch} is {row['status']}", "only a submitted batch that is not collected can be cancelled")
    status = _Client(row["provider"], row["base_url"]).cancel(row["batch_id"])
    _update(con, row["batch_key"], status={"canceling": "cancelling"}.get(status, status), provider_status=status)
    return status


def collect_all(con, writers_for: Callable[[object, str, str, str | None], dict], wait: bool = False,
                poll_interval: float = 30.0) -> tuple[RunSummary, list[dict]]:
    """`hindsight batches collect`: every open batch of every model, written with each purpose's writer,
    which `writers_for(con, model, provider, base_url)` gives (ingest.llm.batch_writers: the commands
    hand their writers to this path, which imports none of them)."""
    summary = RunSummary()
    writers_by_model: dict[str, dict] = {}
    clients: dict = {}
    while True:
        open_rows = []
        for (model, provider, base_url) in con.execute(f"""select distinct model, provider, base_url from raw.batches
                where status not in ({', '.join(repr(s) for s in CLOSED)}) order by model""").fetchall():
            if model not in writers_by_model:
                writers_by_model[model] = writers_for(con, model, provider, base_url)
            open_rows += collect(con, model, writers_by_model[model], {}, summary, None, clients)
        if not wait or not open_rows:
            return summary, open_rows
        for row in open_rows:
            print(f"  {progress_line(row)}", file=sys.stderr, flush=True)
        time.sleep(poll_interval)
