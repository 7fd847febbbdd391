"""`hindsight load responses`: replayed model answers (schema in docs/your-data.md).

`model` is stored verbatim; a response needs no matching request row
(answers made elsewhere have none), but its question must be loaded.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ingest.load.jsonl import JsonlLoadResult, RowError, content_hash, load_jsonl_file, parse_row

CONDITIONS = ("0", "1.1", "1.2", "2.1", "2.2", "3.1", "3.2")
REQUIRED = ["question_id", "model", "condition", "visibility", "answer"]


class ResponseIn(BaseModel):
    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)
    question_id: str
    model: str
    condition: str
    visibility: Literal["full", "masked"]
    prompt_variant: Literal["standard", "warning"] = "standard"
    answer: str | bool | None
    evidence: str | None = None


def check_response(obj: dict, questions: set[str]) -> tuple:
    r = parse_row(ResponseIn, obj, "response")
    condition = r.condition.strip()
    if condition not in CONDITIONS:
        raise RowError("condition", f"{r.condition!r} is not a condition", f"use one of {', '.join(CONDITIONS)} (as a string)")
    if condition == "0" and r.visibility != "full":
        raise RowError("visibility", "condition 0 has no masked variant", "set visibility to full for condition 0")
    if r.question_id not in questions:
        raise RowError("question_id", f"question {r.question_id!r} is not loaded",
                       "load its questions file first with `hindsight load questions`, or correct question_id")
    if not r.model.strip():
        raise RowError("model", "model is empty", "name the model that answered")
    answer = ("true" if r.answer else "false") if isinstance(r.answer, bool) else r.answer
    payload = r.model_dump(mode="json")
    payload.update(condition=condition, answer=answer)
    response_id = "r_" + content_hash(r.question_id, r.model, condition, r.visibility, r.prompt_variant, answer, r.evidence)[:24]
    return (response_id, r.question_id, r.model, condition, r.visibility, r.prompt_variant, answer, r.evidence,
            json.dumps(payload, ensure_ascii=False))


def load_responses(con, path: Path) -> JsonlLoadResult:
    questions = {row[0] for row in con.execute("select distinct question_id from raw.questions").fetchall()}
    return load_jsonl_file(
        con, path, "responses", REQUIRED,
        validate_row=lambda obj: check_response(obj, questions),
        key_of=lambda row: row[0],
        existing_keys_sql="select response_id from raw.responses",
        table="raw.responses",
    )
