"""`hindsight load cases`: narratives and TTS files of one cohort into raw.

One transaction per call: an interrupted load leaves nothing behind and is
simply run again. Files already loaded (same cohort, source, case and bytes)
are passed over, so loading twice adds nothing.
"""
from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from ingest.db import insert_rows, next_load_id
from ingest.errors import InputError
from ingest.load import validation
from ingest.load.tts_files import FORMAT_PRIORITY, case_id_for, read_text, read_tts_file

_NUMBER = re.compile(validation.PLAIN_NUMBER)
_SOURCE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")


@dataclass
class CasesLoadResult:
    load_id: int
    narratives: int = 0
    tts_files: int = 0
    records: int = 0
    already_loaded: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def choose_tts_files(directory: Path) -> tuple[dict[str, Path], list[tuple[Path, str]]]:
    """One file per case: .bsv, else .json/.jsonl, else .csv. Returns the
    chosen files by case_id and the skipped files with the reason."""
    by_case: dict[str, list[Path]] = defaultdict(list)
    skipped: list[tuple[Path, str]] = []
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        if path.name.startswith("."):
            continue
        if path.suffix.lower() not in FORMAT_PRIORITY:
            skipped.append((path, f"unsupported file type {path.suffix or '(none)'}"))
            continue
        by_case[case_id_for(path)].append(path)
    chosen = {}
    for case_id, paths in by_case.items():
        paths.sort(key=lambda p: (FORMAT_PRIORITY[p.suffix.lower()], p.suffix.lower()))
        chosen[case_id] = paths[0]
        skipped += [(p, f"same case as {paths[0].name}, which was loaded") for p in paths[1:]]
    return chosen, skipped


def load_cases(con, cohort: str, narratives: Path | None, tts: dict[str, Path]) -> CasesLoadResult:
    """Load a cohort's narratives and TTS files in one transaction: a file already loaded with the same
    bytes is passed over, a TTS file the checks reject is recorded with its reasons, never dropped."""
    _check_arguments(cohort, narratives, tts)
    seen = {
        (row[0], row[1] or "", row[2], row[3])
        for row in con.execute(
            "select kind, source, case_id, file_sha256 from raw.loads where cohort = ?", [cohort]
        ).fetchall()
    }
    load = _CasesLoad(next_load_id(con), cohort, _now(), seen)
    result = CasesLoadResult(load.load_id)
    if narratives is not None:
        _read_narratives(Path(narratives), load, result)
    files, records = _read_tts(tts, load, result)
    file_outcomes = validation.run_checks("tts_files", _file_summary(files), validation.TTS_FILE_CHECKS)
    record_outcomes = validation.run_checks("tts_records", records[["event_text", "time_text"]], validation.TTS_RECORD_CHECKS)
    file_status = _tts_file_status(files, file_outcomes, load, result)
    result.records = len(records)
    con.execute("begin transaction")
    try:
        insert_rows(con, "raw.loads", load.loads)
        insert_rows(con, "raw.narratives", load.narratives)
        if len(records):
            con.register("incoming_records", records)
            con.register("incoming_files", file_status)
            con.execute(
                """
                insert into raw.tts_records
                select ?, ?, f.case_id, f.source, r.source_file, f.file_format, f.file_status,
                       r.line_number, r.record_text, r.n_fields, r.event_text, r.time_text, ?
                from incoming_records as r
                inner join incoming_files as f on f.source_file = r.source_file and f.source = r.source
                """,
                [load.load_id, cohort, load.now],
            )
        if load.loads:
            validation.insert_outcomes(con, validation.outcome_rows(load.load_id, "tts", "tts_files", file_outcomes)
                                       + validation.outcome_rows(load.load_id, "tts", "tts_records", record_outcomes))
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return result


@dataclass
class _CasesLoad:
    """One call's load id, cohort and time, the files loaded before (kind, source, case, sha256), and
    the raw.loads and raw.narratives rows it appends."""
    load_id: int
    cohort: str
    now: datetime
    seen: set
    loads: list[tuple] = field(default_factory=list)
    narratives: list[tuple] = field(default_factory=list)


def _check_arguments(cohort: str, narratives: Path | None, tts: dict[str, Path]) -> None:
    if not cohort.strip():
        raise InputError("--cohort", "cohort name is empty", "pass --cohort NAME")
    for source, directory in tts.items():
        if not _SOURCE_NAME.match(source):
            raise InputError(f"--tts {source}={directory}", "source name must be a letter followed by letters, digits, _ . -",
                             "name sources like H, L or gpt5")
    for label, directory in [("--narratives", narratives), *[(f"--tts {s}=", d) for s, d in tts.items()]]:
        if directory is not None and not Path(directory).is_dir():
            raise InputError(directory, f"{label} is not a directory", "pass an existing folder")
    if narratives is None and not tts:
        raise InputError("hindsight load cases", "nothing to load", "pass --narratives DIR and/or --tts H=DIR")


def _read_narratives(directory: Path, load: _CasesLoad, result: CasesLoadResult) -> None:
    """Each new narrative file (*.txt), its text as read with its encoding."""
    for path in sorted(directory.glob("*.txt")):
        path = path.resolve()
        digest = _sha256(path)
        if ("narrative", "", case_id_for(path), digest) in load.seen:
            result.already_loaded += 1
            continue
        text, encoding = read_text(path)
        case_id = case_id_for(path)
        load.narratives.append((load.load_id, load.cohort, case_id, str(path), encoding, text, load.now))
        load.loads.append((load.load_id, "narrative", load.cohort, None, case_id, str(path), digest, "loaded", None, 1, load.now))
    result.narratives = len(load.narratives)


def _read_tts(tts: dict[str, Path], load: _CasesLoad, result: CasesLoadResult) -> tuple[list[dict], pd.DataFrame]:
    """The new TTS files of each source, one row per file with what the file checks need, and their
    records; a file passed over (choose_tts_files) is recorded as skipped with its reason."""
    files: list[dict] = []
    record_frames: list[pd.DataFrame] = []
    for source, directory in tts.items():
        chosen, skipped = choose_tts_files(Path(directory))
        for path, reason in skipped:
            path = path.resolve()
            digest = _sha256(path)
            if ("tts", source, case_id_for(path), digest) in load.seen:
                continue
            load.loads.append((load.load_id, "tts", load.cohort, source, case_id_for(path), str(path), digest, "skipped",
                               reason, 0, load.now))
            result.skipped.append((str(path), reason))
        for case_id, path in sorted(chosen.items()):
            path = path.resolve()
            digest = _sha256(path)
            if ("tts", source, case_id, digest) in load.seen:
                result.already_loaded += 1
                continue
            parsed = read_tts_file(path)
            frame = pd.DataFrame(
                [(r.line_number, r.record_text, r.n_fields, r.event_text, r.time_text) for r in parsed.records],
                columns=["line_number", "record_text", "n_fields", "event_text", "time_text"],
            )
            frame.insert(0, "source_file", str(path))
            frame.insert(0, "source", source)
            files.append({
                "source": source, "case_id": case_id, "source_file": str(path), "sha256": digest,
                "file_format": path.suffix.lower().lstrip("."), "structure_error": parsed.structure_error,
                "has_required_fields": parsed.structure_error is None,
                "n_records": len(frame),
                "n_numeric_time": int(frame["time_text"].fillna("").str.match(_NUMBER).sum()) if len(frame) else 0,
            })
            record_frames.append(frame)
    records = pd.concat(record_frames, ignore_index=True) if record_frames else pd.DataFrame(
        columns=["source", "source_file", "line_number", "record_text", "n_fields", "event_text", "time_text"])
    return files, records


def _file_summary(files: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(files, columns=["source", "case_id", "source_file", "sha256", "file_format",
                                        "structure_error", "has_required_fields", "n_records", "n_numeric_time"])


def _tts_file_status(files: list[dict], file_outcomes: list, load: _CasesLoad, result: CasesLoadResult) -> pd.DataFrame:
    """Each TTS file loaded or rejected (its structure error and every failed file check, as one reason),
    as raw.loads rows and as the status its records are stored with."""
    reasons: dict[int, list[str]] = defaultdict(list)
    for outcome in file_outcomes:
        for index in outcome.unexpected_index:
            reasons[index].append(outcome.check.message)
    statuses = []
    for index, info in enumerate(files):
        rejected = index in reasons
        why = None
        if rejected:
            why = "; ".join(([info["structure_error"]] if info["structure_error"] else []) + reasons[index])
            result.rejected.append((info["source_file"], why))
        else:
            result.tts_files += 1
        load.loads.append((load.load_id, "tts", load.cohort, info["source"], info["case_id"], info["source_file"], info["sha256"],
                           "rejected" if rejected else "loaded", why, info["n_records"], load.now))
        statuses.append((info["source_file"], info["source"], info["case_id"], info["file_format"],
                         "rejected" if rejected else "loaded"))
    return pd.DataFrame(statuses, columns=["source_file", "source", "case_id", "file_format", "file_status"])
