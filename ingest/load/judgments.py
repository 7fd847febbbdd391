"""`hindsight load judgments`: free-response scores made elsewhere (another judge
pipeline, or people), one JSON object a line (schema in docs/your-data.md).

Answers are named the way `hindsight load responses` names them (question, model,
condition, visibility, prompt variant, sample). Each line is checked on its own here
(kind, condition, the fields each kind needs, score values); matching it to its
question and answers is the build's job (int_loaded_judgments_matched), so judgments
can be loaded before what they judge, in any order, before one build. A judgment the
build cannot use yet stays in raw and is listed with the reason by the build's
warning and by `hindsight status`. Judgments land in raw.loaded_judgments, and the
marts use them as they use `hindsight judge`'s (the newest judgment of an answer counts).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ingest.load.jsonl import JsonlLoadResult, RowError, content_hash, load_jsonl_file, parse_row
from ingest.load.responses import CONDITIONS

SCORES = (0, 0.5, 1)
REQUIRED = ["kind", "question_id", "model", "condition", "judge"]
SCORE_FIELDS = ("accuracy_score", "htr_score", "full_accuracy_score", "masked_accuracy_score", "full_htr_score",
                "masked_htr_score", "hbr_score")


class JudgmentIn(BaseModel):
    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)   # extra fields (a rationale) are kept
    kind: Literal["individual", "paired"]
    question_id: str
    model: str
    condition: str
    visibility: Literal["full", "masked"] | None = None
    prompt_variant: Literal["standard", "warning"] = "standard"
    sample_index: int = 0           # which sample of the request, when the answers were asked --samples N times
    judge: str
    accuracy_score: float | None = None
    htr_score: float | None = None
    full_accuracy_score: float | None = None
    masked_accuracy_score: float | None = None
    full_htr_score: float | None = None
    masked_htr_score: float | None = None
    full_equals_masked: bool | None = None
    hbr_score: float | None = None


def _score(value: float | None, name: str) -> float | None:
    if value is None:
        return None
    if value not in SCORES:
        raise RowError(name, f"{value!r} is not a score", "scores are 0, 0.5 or 1")
    return float(value)


def check_judgment(obj: dict) -> tuple:
    """raw.loaded_judgments' columns for one line (judgment_id first; file, line and time left to the
    loader). Whether its question is a free response and its eval target's scores are there is
    decided by the build, which knows the question."""
    j = parse_row(JudgmentIn, obj, "judgment")
    condition = j.condition.strip()
    if condition not in CONDITIONS:
        raise RowError("condition", f"{j.condition!r} is not a condition", f"use one of {', '.join(CONDITIONS)} (as a string)")
    if not j.judge.strip():
        raise RowError("judge", "judge is empty", "name the judge, e.g. people:panel-1 or openai:gpt-5.5")
    if j.kind == "individual":
        if j.visibility is None:
            raise RowError("visibility", "an individual judgment names the answer's visibility", "set visibility to full or masked")
        if condition == "0" and j.visibility != "full":
            raise RowError("visibility", "condition 0 has no masked variant", "set visibility to full for condition 0")
        if j.accuracy_score is None and j.htr_score is None:
            raise RowError("accuracy_score", "an individual judgment gives accuracy_score, htr_score or both",
                           "give the scores as 0, 0.5 or 1")
        visibility = j.visibility
    else:
        if condition == "0":
            raise RowError("condition", "condition 0 has no masked answer to pair with", "use a paired condition (1.1 ... 3.2)")
        if j.full_equals_masked is None:
            raise RowError("full_equals_masked", "missing", "give true when the two answers are the same, else false")
        visibility = None
    scores = tuple(_score(getattr(j, name), name) for name in SCORE_FIELDS)
    accuracy, htr, *paired = scores
    equal = j.full_equals_masked if j.kind == "paired" else None
    cell = (j.question_id, j.model, condition, visibility, j.prompt_variant, j.sample_index)
    judgment_id = "x_" + content_hash(j.judge.strip(), j.kind, *cell, *scores, equal)[:24]
    record = j.model_dump(mode="json", exclude_none=True)
    return (judgment_id, j.kind, *cell, j.judge.strip(), accuracy, htr, equal, *paired,
            json.dumps(record, ensure_ascii=False))


def load_judgments(con, path: Path) -> JsonlLoadResult:
    return load_jsonl_file(
        con, path, "judgments", REQUIRED,
        validate_row=check_judgment,
        key_of=lambda row: row[0],
        existing_keys_sql="select judgment_id from raw.loaded_judgments",
        # row = (load_id, source_file, line_number, judgment_id ... record, loaded_at)
        table="raw.loaded_judgments",
    )
