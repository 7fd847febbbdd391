"""`hindsight load questions`: the paper's generator schema plus case_id.

A question is rejected (with file, line, field and fix) when its cutoff is
not a number, its case is unknown, or its answers are not among its options.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from ingest.load.jsonl import JsonlLoadResult, RowError, content_hash, load_jsonl_file, parse_row
from ingest.load.validation import PLAIN_NUMBER

OPTION_LETTER = re.compile(r"^\s*\(?([A-Za-z])[.):]?\s*(.*)$", re.S)
REQUIRED = ["question", "format", "eval_target", "early_cutoff", "correct_answer", "case_id"]


class EarlyCutoff(BaseModel):
    model_config = ConfigDict(extra="allow")
    event: str | None = None
    time: float | int | str


class QuestionIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    question_id: str | None = None
    case_id: str
    cohort: str | None = None
    question: str
    format: Literal["free response", "multiple choice", "true/false"]
    options: list[str] | None = None
    options_type: Literal["ordinal", "categorical"] | None = None
    eval_target: Literal["accuracy", "hindsight_bias", "both"]
    reference_time: str | None = None
    early_cutoff: EarlyCutoff
    correct_answer: str | bool
    hindsight_trap: str | bool | None = None
    hindsight_trap_explanation: str | None = None

    @field_validator("options_type", mode="before")
    @classmethod
    def _null_strings(cls, value):
        return None if value in ("null", "") else value


def option_letter(answer: str, options: list[str]) -> str | None:
    """The option an answer names: the full option string, its letter (`B`,
    `B.`, `(B)`, `B)`) or its text. None when it names none."""
    letters = [OPTION_LETTER.match(o).group(1).upper() if OPTION_LETTER.match(o) else None for o in options]
    texts = [OPTION_LETTER.match(o).group(2).strip().lower() if OPTION_LETTER.match(o) else o.lower() for o in options]
    answer = answer.strip()
    for option, letter in zip(options, letters):
        if answer == option.strip():
            return letter
    match = re.fullmatch(r"\(?([A-Za-z])[.):]?", answer)
    if match and match.group(1).upper() in letters:
        return match.group(1).upper()
    if answer.lower() in texts:
        return letters[texts.index(answer.lower())]
    return None


def _truth(value) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).strip().lower().rstrip(".")
    return text if text in ("true", "false") else None


def check_question(obj: dict, cases: dict[str, list[str]], default_cohort: str | None) -> tuple:
    q = parse_row(QuestionIn, obj, "question")
    if not re.match(PLAIN_NUMBER, str(q.early_cutoff.time)):
        raise RowError("early_cutoff.time", f"cutoff {q.early_cutoff.time!r} is not a number",
                       "give the cutoff as a plain number of hours in the H TTS time coordinate, e.g. 24 or -6.5")
    cohort = q.cohort or default_cohort
    known = cases.get(q.case_id, [])
    if cohort is None:
        if len(known) > 1:
            raise RowError("case_id", f"case {q.case_id!r} is loaded in several cohorts ({', '.join(known)})",
                           "add a `cohort` field or pass --cohort")
        cohort = known[0] if known else None
    if cohort is None or cohort not in known:
        raise RowError("case_id", f"case {q.case_id!r} is not loaded" + (f" in cohort {cohort!r}" if cohort else ""),
                       "load the case first with `hindsight load cases`, or correct case_id")
    answers = {"correct_answer": q.correct_answer}
    if q.eval_target != "accuracy":
        if q.hindsight_trap in (None, ""):
            raise RowError("hindsight_trap", f"missing for eval_target {q.eval_target}",
                           "give the trap answer, or set eval_target to accuracy")
        answers["hindsight_trap"] = q.hindsight_trap
    elif q.hindsight_trap is not None:
        answers["hindsight_trap"] = q.hindsight_trap
    if q.format == "multiple choice":
        if not q.options or len(q.options) < 2:
            raise RowError("options", "a multiple choice question needs its options", 'give options like ["A. ...", "B. ..."]')
        if q.options_type is None:
            raise RowError("options_type", "missing for a multiple choice question", "set options_type to ordinal or categorical")
        for name, value in answers.items():
            if isinstance(value, bool) or option_letter(value, q.options) is None:
                raise RowError(name, f"{value!r} is not among the options",
                               "use one option string exactly as it appears in options (e.g. \"B. 10-30%\")")
    elif q.format == "true/false":
        for name, value in answers.items():
            if _truth(value) is None:
                raise RowError(name, f"{value!r} is not true or false", "answer true/false questions with true or false")
    payload = q.model_dump(mode="json")
    payload["early_cutoff"]["time"] = str(q.early_cutoff.time)
    for name in answers:
        if isinstance(payload[name], bool):
            payload[name] = "true" if payload[name] else "false"
    question_id = q.question_id or "q_" + content_hash(cohort, q.case_id, q.question, q.format, q.options)[:16]
    payload["question_id"], payload["cohort"] = question_id, cohort
    return (question_id, cohort, q.case_id, content_hash(payload), json.dumps(payload, ensure_ascii=False))


def load_questions(con, path: Path, cohort: str | None = None) -> JsonlLoadResult:
    cases: dict[str, list[str]] = {}
    for case_id, case_cohort in con.execute(
        "select distinct case_id, cohort from raw.loads where kind in ('narrative', 'tts') and status = 'loaded'"
    ).fetchall():
        cases.setdefault(case_id, []).append(case_cohort)
    return load_jsonl_file(
        con, path, "questions", REQUIRED,
        validate_row=lambda obj: check_question(obj, cases, cohort),
        key_of=lambda row: row[0] + ":" + row[3],
        existing_keys_sql="select question_id || ':' || content_sha256 from raw.questions",
        table="raw.questions",
    )
