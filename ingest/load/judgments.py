"""`hindsight load judgments`: free-response scores made elsewhere (another judge
pipeline, or people), one JSON object a line (schema in README).

Answers are named the way `hindsight load responses` names them (question, model,
condition, visibility, prompt variant) and resolved to the newest answer of that
cell in fct_answers, so a judgment is tied to the answer text it judged. A judge
returns every score whatever the eval target: the scores a question's target does
not use are stored and ignored, never a reason to reject a line; the ones it uses
must be there. Judgments land in raw.judgments beside those of `hindsight judge`,
and the marts use them the same way (the newest judgment of an answer counts).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ingest.db import require_marts
from ingest.load.jsonl import JsonlLoadResult, RowError, content_hash, load_jsonl_file, parse_row
from ingest.load.responses import CONDITIONS

SCORES = (0, 0.5, 1)
REQUIRED = ["kind", "question_id", "model", "condition", "judge"]
# the scores each eval target uses (§3.7): Acc for accuracy and both, HTR for hindsight_bias and both
USES = {"accuracy": ("accuracy",), "hindsight_bias": ("htr",), "both": ("accuracy", "htr")}


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


def _score(value: float | None, name: str, needed: bool) -> float | None:
    if value is None:
        if needed:
            raise RowError(name, "missing, and the question's eval target uses it", f"give {name} as 0, 0.5 or 1")
        return None
    if value not in SCORES:
        raise RowError(name, f"{value!r} is not a score", "scores are 0, 0.5 or 1")
    return float(value)


class Resolver:
    """The warehouse's view of questions and answers, read once per file."""

    def __init__(self, con):
        require_marts(con, "dim_questions", "fct_answers")
        self.questions = {qid: (fmt, target) for qid, fmt, target in con.execute(
            "select question_id, format, eval_target from dim_questions").fetchall()}
        self.answers = {tuple(key): rid for *key, rid in con.execute(
            """select question_id, model, condition, visibility, prompt_variant, sample_index, response_id
               from fct_answers where is_latest_in_cell""").fetchall()}

    def answer(self, j: JudgmentIn, condition: str, visibility: str) -> str:
        found = self.answers.get((j.question_id, j.model, condition, visibility, j.prompt_variant, j.sample_index))
        if found is None:
            raise RowError("model", f"no {visibility} answer of {j.model!r} to {j.question_id} in condition {condition} "
                                    f"({j.prompt_variant} prompt, sample {j.sample_index}) is stored",
                           "load or collect the answers first (hindsight load responses / answer), run hindsight build, "
                           "or correct model, condition, visibility and prompt_variant")
        return found


def check_judgment(obj: dict, resolver: Resolver) -> tuple:
    """raw.judgments' columns for one line (judgment_id first, judged_at left to the loader)."""
    j = parse_row(JudgmentIn, obj, "judgment")
    condition = j.condition.strip()
    if condition not in CONDITIONS:
        raise RowError("condition", f"{j.condition!r} is not a condition", f"use one of {', '.join(CONDITIONS)} (as a string)")
    if j.question_id not in resolver.questions:
        raise RowError("question_id", f"question {j.question_id!r} is not loaded",
                       "load its questions first (hindsight load questions) and run hindsight build, or correct question_id")
    if not j.judge.strip():
        raise RowError("judge", "judge is empty", "name the judge, e.g. people:panel-1 or openai:gpt-5.5")
    fmt, target = resolver.questions[j.question_id]
    if fmt != "free response":
        raise RowError("question_id", f"question {j.question_id} is {fmt}: it is scored by matching its options, not by a judge",
                       "load judgments of free-response answers only")
    uses = USES[target]
    if j.kind == "individual":
        if j.visibility is None:
            raise RowError("visibility", "an individual judgment names the answer's visibility", "set visibility to full or masked")
        if condition == "0" and j.visibility != "full":
            raise RowError("visibility", "condition 0 has no masked variant", "set visibility to full for condition 0")
        response_id = resolver.answer(j, condition, j.visibility)
        scores = (_score(j.accuracy_score, "accuracy_score", "accuracy" in uses),
                  _score(j.htr_score, "htr_score", "htr" in uses))
        ids, paired_scores, equal = (response_id, None, None), (None,) * 5, None
    else:
        if condition == "0":
            raise RowError("condition", "condition 0 has no masked answer to pair with", "use a paired condition (1.1 ... 3.2)")
        if j.full_equals_masked is None:
            raise RowError("full_equals_masked", "missing", "give true when the two answers are the same, else false")
        full_id, masked_id = resolver.answer(j, condition, "full"), resolver.answer(j, condition, "masked")
        ids, scores, equal = (None, full_id, masked_id), (None, None), j.full_equals_masked
        paired_scores = (_score(j.full_accuracy_score, "full_accuracy_score", "accuracy" in uses),
                         _score(j.masked_accuracy_score, "masked_accuracy_score", "accuracy" in uses),
                         _score(j.full_htr_score, "full_htr_score", "htr" in uses),
                         _score(j.masked_htr_score, "masked_htr_score", "htr" in uses),
                         _score(j.hbr_score, "hbr_score", False))
    record = j.model_dump(mode="json", exclude_none=True)
    judgment_id = "x_" + content_hash(j.judge, j.kind, *ids, *scores, equal, *paired_scores)[:24]
    return (judgment_id, j.kind, *ids, j.judge.strip(), *scores, equal, *paired_scores,
            json.dumps(record, ensure_ascii=False))


def load_judgments(con, path: Path) -> JsonlLoadResult:
    resolver = Resolver(con)
    return load_jsonl_file(
        con, path, "judgments", REQUIRED,
        validate_row=lambda obj: check_judgment(obj, resolver),
        key_of=lambda row: row[0],
        existing_keys_sql="select judgment_id from raw.judgments",
        # row = (load_id, source_file, line_number, judgment_id ... record, loaded_at): the raw
        # output keeps the line and where it came from; judged_at is the load time
        insert_sql="""insert into raw.judgments values ($4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                      json_object('source_file', $2, 'line_number', $3, 'load_id', $1, 'record', json($18))::varchar,
                      $19)""",
    )
