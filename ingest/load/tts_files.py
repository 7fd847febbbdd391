"""Read one TTS file into records, without judging them.

A record is a non-blank line of a .bsv, a data row after a .csv's header
line, or an element of a .json array / a non-blank line of a .jsonl.
`line_number` is the 1-based physical line where the record starts. Whether
a record is a valid `event | hours` row is decided in SQL (staging), so the
rules live in one place and every record reaches raw.
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

FORMAT_PRIORITY = {".bsv": 0, ".json": 1, ".jsonl": 1, ".csv": 2}

# Trailing backslashes and LaTeX row ends (`\\`, `\\ \hline`) come from LLM
# output wrapped in \boxed{} or tabular environments.
_TRAILING_JUNK = re.compile(r"(\s*(\\hline|\\\\|\\))+\s*$")


@dataclass
class Record:
    line_number: int
    record_text: str
    n_fields: int
    event_text: str | None
    time_text: str | None


@dataclass
class TtsFile:
    records: list[Record]
    structure_error: str | None = None  # set when the file cannot be read as its format


def case_id_for(path: Path) -> str:
    stem = path.stem
    return stem[: -len("_body")] if stem.endswith("_body") else stem


def read_text(path: Path) -> tuple[str, str]:
    """UTF-8 (BOM tolerated), else Latin-1, which never fails."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "latin-1"


def clean_line(line: str) -> str:
    return _TRAILING_JUNK.sub("", line.rstrip()).strip()


def read_bsv(text: str) -> TtsFile:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        cleaned = clean_line(line)
        fields = cleaned.split("|") if cleaned else [""]
        event = fields[0].strip()
        time = fields[1].strip() if len(fields) > 1 else None
        records.append(Record(number, line, len(fields), event, time))
    return TtsFile(records)


def read_csv(text: str) -> TtsFile:
    lines = text.splitlines(keepends=True)
    reader = csv.reader(io.StringIO("".join(lines)))
    records: list[Record] = []
    header: list[str] | None = None
    start = 1
    for row in reader:
        end = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            start = end + 1
            continue
        record_text = "".join(lines[start - 1 : end]).rstrip("\r\n")
        if header is None:
            header = [cell.strip().lstrip("\ufeff").strip().lower() for cell in row]
            if "event" not in header or "time" not in header:
                # keep the line as a record so it is accounted for
                records.append(Record(start, record_text, len(row), row[0].strip(), None))
                start = end + 1
                continue
            start = end + 1
            continue
        cells = {name: row[i] if i < len(row) else None for i, name in enumerate(header)}
        event = cells.get("event")
        time = cells.get("time")
        records.append(
            Record(start, record_text, len(row),
                   clean_line(event) if event is not None else None,
                   clean_line(time) if time is not None else None)
        )
        start = end + 1
    if header is None or "event" not in header or "time" not in header:
        return TtsFile(records, "no `event,time` header line")
    return TtsFile(records)


def _json_record(number: int, text: str, element) -> Record:
    if isinstance(element, dict):
        event, time = element.get("event"), element.get("time")
        n_fields = len(element)
        event_text = None if event is None else (event if isinstance(event, str) else json.dumps(event))
        if time is None or isinstance(time, bool):
            time_text = None if time is None else json.dumps(time)
        elif isinstance(time, (int, float)):
            time_text = repr(time)
        else:
            time_text = time if isinstance(time, str) else json.dumps(time)
        return Record(number, text, n_fields, event_text, time_text)
    return Record(number, text, 1, None, None)


def read_jsonl(text: str) -> TtsFile:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            element = json.loads(line)
        except json.JSONDecodeError:
            records.append(Record(number, line, 0, None, None))
            continue
        records.append(_json_record(number, line, element))
    return TtsFile(records)


def read_json(text: str) -> TtsFile:
    """A JSON array; each element's line is where its text starts."""
    decoder = json.JSONDecoder()
    position = _skip_ws(text, 0)
    if position >= len(text) or text[position] != "[":
        return _unreadable(text, "not a JSON array")
    position = _skip_ws(text, position + 1)
    records = []
    while position < len(text) and text[position] != "]":
        try:
            element, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            return _unreadable(text, f"invalid JSON at line {error.lineno}: {error.msg}")
        number = text.count("\n", 0, position) + 1
        records.append(_json_record(number, text[position:end], element))
        position = _skip_ws(text, end)
        if position < len(text) and text[position] == ",":
            position = _skip_ws(text, position + 1)
    if position >= len(text):
        return _unreadable(text, "JSON array is not closed")
    return TtsFile(records)


def _skip_ws(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _unreadable(text: str, reason: str) -> TtsFile:
    # A file that is not JSON at all: its non-blank lines are its records.
    records = [Record(n, line, 0, None, None) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    return TtsFile(records, reason)


READERS = {".bsv": read_bsv, ".csv": read_csv, ".json": read_json, ".jsonl": read_jsonl}


def read_tts_file(path: Path) -> TtsFile:
    text, _ = read_text(path)
    return READERS[path.suffix.lower()](text)
