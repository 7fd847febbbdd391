"""Shared path of the JSONL loaders (questions, responses).

Each line is validated on its own: a bad line is rejected with the file,
line, field and fix, and every other line still loads. A file whose
structure is wrong (a required field missing from every line) is rejected
whole by the Great Expectations suite. One transaction per file.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pandas as pd
from pydantic import BaseModel, ValidationError

from ingest.db import insert_rows, next_load_id
from ingest.errors import InputError
from ingest.load import validation
from ingest.load.tts_files import read_text


class RowError(Exception):
    def __init__(self, field: str, reason: str, fix: str):
        super().__init__(f"{field}: {reason}")
        self.field, self.reason, self.fix = field, reason, fix


def parse_row(schema: type[BaseModel], obj: dict, what: str):
    """Validate one object against a pydantic schema; the first problem becomes a RowError."""
    try:
        return schema.model_validate(obj)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(line)"
        raise RowError(where, first["msg"], f"follow the {what} schema in docs/your-data.md") from None


@dataclass
class JsonlLoadResult:
    load_id: int | None
    source_file: str
    inserted: int = 0
    duplicates: int = 0
    already_loaded: bool = False
    errors: list[InputError] = field(default_factory=list)


def content_hash(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def load_jsonl_file(
    con,
    path: Path,
    kind: str,
    required: list[str],
    validate_row: Callable[[dict], tuple],
    key_of: Callable[[tuple], str],
    existing_keys_sql: str,
    table: str,
) -> JsonlLoadResult:
    """Load one JSONL file into TABLE in one transaction: read its lines, check the fields every line
    needs, validate each row (`validate_row` turns a parsed object into the raw row's business columns,
    without load_id, file, line and loaded_at, or raises RowError), quarantine what fails with its line
    and reason, and append the rest; a file loaded before (the same bytes) is passed over."""
    path = Path(path).resolve()
    if not path.is_file():
        raise InputError(path, "file not found", "pass the path of a .jsonl file")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    previous = _previous_load(con, path, kind, digest)
    if previous is not None:
        return JsonlLoadResult(previous, str(path), already_loaded=True)
    text, _ = read_text(path)
    quarantine = _Quarantine(path, kind, next_load_id(con), datetime.now(timezone.utc).replace(tzinfo=None))
    result = JsonlLoadResult(quarantine.load_id, str(path), errors=quarantine.errors)
    parsed = _parse_lines(text, quarantine)
    outcomes = _required_fields(kind, parsed, required)
    missing = [o.check.kwargs["column"] for o in outcomes if not o.success]
    rows, status, why = [], "loaded", None
    if missing:
        status, why = "rejected", "required fields missing from every line: " + ", ".join(missing)
        result.errors.append(InputError(path, why, "add the fields (see the schema in docs/your-data.md) and load again"))
    else:
        rows, result.duplicates = _new_rows(con, parsed, validate_row, key_of, existing_keys_sql, quarantine)
    result.errors.sort(key=lambda e: e.line or 0)
    quarantine.rows.sort(key=lambda r: r[3])
    con.execute("begin transaction")
    try:
        con.execute("insert into raw.loads values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [quarantine.load_id, kind, None, None, None, str(path), digest, status, why, len(rows), quarantine.now])
        insert_rows(con, table, rows)
        insert_rows(con, "raw.rejected_rows", quarantine.rows)
        validation.insert_outcomes(con, validation.outcome_rows(quarantine.load_id, kind, kind, outcomes))
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    result.inserted = len(rows)
    return result


def _previous_load(con, path: Path, kind: str, digest: str) -> int | None:
    """The load that took this file's bytes before, or None; a file rejected whole stays rejected."""
    previous = con.execute(
        "select load_id, status, reason from raw.loads where kind = ? and file_sha256 = ? order by load_id limit 1",
        [kind, digest],
    ).fetchone()
    if previous and previous[1] == "rejected":
        raise InputError(path, f"this file was rejected whole by load {previous[0]}: {previous[2]}",
                         "correct the file and load it again")
    return previous[0] if previous else None


@dataclass
class _Quarantine:
    """The lines of one file that are kept out of the tables: raw.rejected_rows rows and the errors shown."""
    path: Path
    kind: str
    load_id: int
    now: datetime
    rows: list[tuple] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)

    def reject(self, line: int, record: str, err: RowError) -> None:
        self.errors.append(InputError(self.path, err.reason, err.fix, line=line, field=err.field))
        self.rows.append((self.load_id, self.kind, str(self.path), line, err.field, err.reason, err.fix, record, self.now))


def _parse_lines(text: str, quarantine: _Quarantine) -> list[tuple[int, str, dict]]:
    """(line number, line, object) of each line that is a JSON object; blank lines are skipped."""
    parsed = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as error:
            quarantine.reject(number, line, RowError("(line)", f"not valid JSON ({error.msg})", "write one JSON object per line"))
            continue
        if not isinstance(obj, dict):
            quarantine.reject(number, line, RowError("(line)", "not a JSON object", "write one JSON object per line"))
            continue
        parsed.append((number, line, obj))
    return parsed


def _required_fields(kind: str, parsed: list[tuple[int, str, dict]], required: list[str]) -> list:
    """The file-level checks (Great Expectations): each required field present in the file."""
    if not parsed:
        return []
    checks = [validation.Check("ExpectColumnToExist", {"column": name}, "critical",
                               f"required field `{name}` is missing from every line", f"add `{name}` to each object")
              for name in required]
    return validation.run_checks(kind, pd.DataFrame([obj for _, _, obj in parsed]), checks)


def _new_rows(con, parsed, validate_row, key_of, existing_keys_sql: str, quarantine: _Quarantine) -> tuple[list, int]:
    """The rows to append (a row whose key is stored already, or earlier in the file, is a duplicate,
    counted), and the number of duplicates; an invalid row is quarantined."""
    keys = {row[0] for row in con.execute(existing_keys_sql).fetchall()}
    rows, duplicates = [], 0
    for number, line, obj in parsed:
        try:
            business = validate_row(obj)
        except RowError as err:
            quarantine.reject(number, line, err)
            continue
        key = key_of(business)
        if key in keys:
            duplicates += 1
            continue
        keys.add(key)
        rows.append((quarantine.load_id, str(quarantine.path), number, *business, quarantine.now))
    return rows, duplicates
