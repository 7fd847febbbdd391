"""`hindsight load inspect LOG…`: answers collected by Inspect AI from an exported task
(ingest/llm/inspect_task.py) become the warehouse's answers.

Each sample x epoch of a log is one call: raw.llm_calls keeps its model, token usage, stop reason
and error, and an answer goes to raw.responses through the runner's own writer (same parser,
same payload; sample_index = epoch - 1; a reply that hit the token limit is `truncated`). A sample
is matched to its request by its id (the request_id) and identity metadata, and only when the
messages the model saw are exactly the request's: another template, or a solver that added or
changed a message, is rejected with the reason, never scored as the benchmark. With `--judge`,
the log's scores become judgments from another pipeline (raw.loaded_judgments) named after it.

One load per log file, in one transaction: a file loaded before is skipped, a call loaded before
(the same eval, sample and epoch, from a log that grew since) is not written twice, and a bad
sample is kept in raw.rejected_rows while the rest of its log loads. Reading needs inspect_ai.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

from ingest.db import fetch_dicts, insert_rows, next_load_id, require_marts
from ingest.errors import InputError
from ingest.llm.answer import answer_writer
from ingest.llm.profiles import SettingsResolver
from ingest.llm.prompts import answer_messages
from ingest.llm.providers import Completion
from ingest.llm.runner import Job, RunSummary, ledger_record, store_result
from ingest.load.jsonl import RowError
from ingest.load.judgments import check_judgment

KIND = "inspect"
IDENTITY = ("question_id", "condition", "visibility", "prompt_variant")
# Inspect's stop reasons of a reply cut short: the output token limit, or the context window
CUT_OFF = {"max_tokens": "max_tokens", "model_length": "length"}

@dataclass
class InspectLoadResult:
    source_file: str
    load_id: int | None = None
    model: str | None = None
    answers: int = 0
    truncated: int = 0
    failed: int = 0            # samples Inspect recorded an error for (kept in raw.llm_calls)
    judgments: int = 0
    duplicates: int = 0        # calls loaded before
    already_loaded: bool = False
    errors: list[InputError] = field(default_factory=list)


def log_files(paths: list[Path]) -> list[Path]:
    """The logs named: files as given, folders by their *.eval and *.json (sorted)."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.suffix in (".eval", ".json") and p.name != "logs.json")
        elif path.is_file():
            found.append(path)
        else:
            raise InputError(path, "not found", "pass Inspect log files (.eval, .json) or a folder of them")
    return found


def _read_log(path: Path):
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(path, "reading Inspect logs needs inspect_ai", "pip install 'hindsight-warehouse[inspect]'") from None
    try:
        return read_eval_log(str(path), resolve_attachments=True)
    except Exception as error:        # a zip, JSON or schema error: Inspect's own message says which
        raise RowError("(file)", f"not a readable Inspect log ({type(error).__name__}: {str(error)[:300]})",
                       "pass a .eval or .json log written by `inspect eval`") from None


def _text(message) -> str:
    return message.text if hasattr(message, "text") else str(message.content)


def message_difference(sample, expected: list[dict]) -> str | None:
    """Why the messages the model was sent are not the request's, or None when they are."""
    sent = []
    for message in sample.messages:
        if message.role == "assistant":
            break
        sent.append((message.role, _text(message)))
    want = [(m["role"], m["content"]) for m in expected]
    if sent == want:
        return None
    for at in range(len(sent)):
        if sent[:at] + sent[at + 1:] == want:
            return f"a {sent[at][0]} message was added as message {at + 1} (a solver's, not the request's)"
    for at, (got, need) in enumerate(zip(sent, want)):
        if got != need:
            what = "role" if got[0] != need[0] else "text"
            return f"message {at + 1} ({got[0]}) differs from the request's {need[0]} message in its {what}"
    extra = "added" if len(sent) > len(want) else "missing"
    return f"{abs(len(sent) - len(want))} message(s) {extra}: the model saw {len(sent)}, the request has {len(want)}"


def _sent_settings(log, settings) -> dict:
    """The generation settings the eval ran with: its own config over the request's profile."""
    config = log.plan.config.model_dump(exclude_none=True) if log.plan and log.plan.config else {}
    sent = {"temperature": settings.temperature, "max_tokens": settings.max_tokens}
    sent.update({k: config[k] for k in ("temperature", "max_tokens", "reasoning_effort", "reasoning_tokens") if k in config})
    return {k: v for k, v in sent.items() if v is not None}


def _completion(sample) -> Completion:
    output, usage = sample.output, sample.output.usage
    stop = output.stop_reason
    if sample.limit is not None and sample.limit.type == "token":
        stop = "max_tokens"                 # the sample's token limit ended it
    return Completion(text=output.completion or "", reported_model=output.model,
                      input_tokens=usage.input_tokens if usage else None,
                      output_tokens=usage.output_tokens if usage else None,
                      finish_reason=CUT_OFF.get(stop, stop))


def _judgment(sample, request: dict, model: str, judge: str, name: str, score) -> dict:
    """A scorer's value as an individual judgment: a number or C/P/I is accuracy; a dict gives
    `accuracy` and `htr`."""
    value = score.value
    marks = {"C": 1, "P": 0.5, "I": 0}

    def number(v):
        return marks.get(v, v) if isinstance(v, str) else (float(v) if isinstance(v, (bool, int, float)) else v)

    scores = ({"accuracy_score": number(value.get("accuracy")), "htr_score": number(value.get("htr"))}
              if isinstance(value, dict) else {"accuracy_score": number(value)})
    return {"kind": "individual", "judge": judge, "model": model, "sample_index": sample.epoch - 1,
            **{k: request[k] for k in IDENTITY}, **{k: v for k, v in scores.items() if v is not None},
            "scorer": name, "explanation": score.explanation}


def load_inspect_log(con, path: Path, model: str | None = None, judge: str | None = None) -> InspectLoadResult:
    """Load one Inspect log (see the module's docstring)."""
    path = Path(path).resolve()
    require_marts(con, "fct_answer_requests")
    result = InspectLoadResult(str(path))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    previous = con.execute("select load_id, status, reason from raw.loads where kind = ? and file_sha256 = ? "
                           "order by load_id limit 1", [KIND, digest]).fetchone()
    if previous and previous[1] == "rejected":
        raise InputError(path, f"this log was rejected whole by load {previous[0]}: {previous[2]}",
                         "pass a log written by `inspect eval` of an exported task")
    if previous:
        result.load_id, result.already_loaded = previous[0], True
        return result
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    load_id = result.load_id = next_load_id(con)
    rejected: list[tuple] = []

    def reject(line: int, record: dict, err: RowError) -> None:
        result.errors.append(InputError(path, err.reason, err.fix, line=line, field=err.field))
        rejected.append((load_id, KIND, str(path), line, err.field, err.reason, err.fix,
                         json.dumps(record, ensure_ascii=False, default=str), now))

    try:
        log = _read_log(path)
    except RowError as err:
        reject(0, {"file": str(path)}, err)
        _commit(con, load_id, path, digest, "rejected", err.reason, 0, rejected, [], now)
        return result
    spec = result.model = model or f"inspect:{log.eval.model}"
    samples = log.samples or []
    ids = sorted({str(s.id) for s in samples})
    requests = {r["request_id"]: r for r in fetch_dicts(
        con, "select * from fct_answer_requests where request_id in (select unnest(?))", [ids])} if ids else {}
    settings_for = SettingsResolver(con, "answer", None)
    known_calls = {r[0] for r in con.execute("select call_id from raw.llm_calls where status = 'ok'").fetchall()}
    known_judgments = {r[0] for r in con.execute("select judgment_id from raw.loaded_judgments").fetchall()}
    source = SimpleNamespace(provider=KIND, base_url=None)
    write = answer_writer(con, spec, source, load_id=load_id, source=str(path))
    summary, stored, judgments = RunSummary(), [], []

    for line, sample in enumerate(samples, start=1):
        record = {"id": sample.id, "epoch": sample.epoch, "metadata": sample.metadata}
        request = requests.get(str(sample.id))
        position = (sample.metadata or {}).get("warning_position") or "end"
        problem = _sample_problem(sample, request, position)
        if problem:
            reject(line, record, problem)
            continue
        expected = answer_messages(request, position)
        call_id = "inspect_" + hashlib.sha256(f"{log.eval.eval_id}|{sample.id}|{sample.epoch}".encode()).hexdigest()[:24]
        if call_id in known_calls:
            result.duplicates += 1
            continue
        known_calls.add(call_id)
        settings = settings_for(request)
        job = Job("answer", request["request_id"], expected, request, request["prompt_variant"],
                  position if request["prompt_variant"] == "warning" else None, sample.epoch - 1, settings, call_id)
        completion = None if sample.error else _completion(sample)
        started = datetime.fromisoformat(sample.started_at).replace(tzinfo=None) if sample.started_at else now
        stored.append((job, completion, ledger_record(job, completion, sample.error.message if sample.error else None,
                                                      KIND, spec, None, _sent_settings(log, settings), started,
                                                      sample.total_time)))
        if judge and sample.scores and completion is not None:
            for obj, row, err in _sample_judgments(sample, request, spec, judge):
                if err:
                    reject(line, obj, err)
                elif row[0] not in known_judgments:
                    known_judgments.add(row[0])
                    judgments.append((load_id, str(path), line, *row, now))

    def write_all(cursor) -> None:
        for job, completion, ledger in stored:
            store_result(cursor, [job], completion, ledger, write, summary)

    _commit(con, load_id, path, digest, "loaded", None, len(stored), rejected, judgments, now, write_all)
    result.answers, result.truncated, result.failed = summary.answered, summary.truncated, summary.failed
    result.judgments = len(judgments)
    return result


def _sample_problem(sample, request: dict | None, position: str) -> RowError | None:
    """Why SAMPLE is not an answer to REQUEST, the request its id names: no such request, metadata that
    is not the request's, or messages other than the ones the request sends. None when it is."""
    if request is None:
        return RowError("id", f"no request {sample.id!r} in fct_answer_requests",
                        "run a task exported from this warehouse (`hindsight export inspect`)")
    wrong = [k for k in IDENTITY if str((sample.metadata or {}).get(k)) != str(request[k])]
    if wrong:
        return RowError(f"metadata.{wrong[0]}", f"{(sample.metadata or {}).get(wrong[0])!r} is not the "
                        f"request's {request[wrong[0]]!r}", "keep the exported samples' metadata as written")
    difference = message_difference(sample, answer_messages(request, position))
    if difference:
        return RowError("messages", difference, "run the exported task as written: no system_message() "
                        "or other solver that adds or edits a message, and the same prompt template")
    return None


def _sample_judgments(sample, request: dict, model: str, judge: str):
    """Each of SAMPLE's scores as a judgment: (the judgment object, its raw row or None, the RowError
    that keeps it out or None)."""
    for name, score in sample.scores.items():
        obj = _judgment(sample, request, model, judge, name, score)
        try:
            yield obj, check_judgment(obj), None
        except RowError as err:
            yield obj, None, err


def _commit(con, load_id, path, digest, status, why, n, rejected, judgments, now, write_all=None) -> None:
    con.execute("begin transaction")
    try:
        con.execute("insert into raw.loads values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [load_id, KIND, None, None, None, str(path), digest, status, why, n, now])
        if write_all:
            write_all(con)
        if judgments:
            insert_rows(con, "raw.loaded_judgments", judgments)
        if rejected:
            insert_rows(con, "raw.rejected_rows", rejected)
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
