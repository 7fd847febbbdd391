"""`hindsight validation load FILE.csv`: clinicians' assessments from their packets (Appendix G).

Two CSV contracts, told apart by their header:

- questions: `annotator, case_id, question_id, reasonable, agree_reference, agree_trap, comment`
  (values yes, no, na, or empty while unanswered);
- judge checks: `annotator, case_id, question_id, response_id, judge_model, judge_accuracy_score,
  judge_htr_score, human_accuracy_score, human_htr_score, comment` (the annotator's own scores, 0, 0.5
  or 1, or empty).

Every row is checked (the annotator is in a design, the question is in that annotator's assignment,
the values are allowed); a bad row is reported with file, line, field and fix and kept in
raw.rejected_rows while the others load. A row already loaded with the same content adds nothing; a
changed row is a new version (the marts use the newest).
"""
from __future__ import annotations

import csv
import io
from datetime import datetime, timezone
from pathlib import Path

from ingest.db import insert_rows, next_load_id
from ingest.errors import InputError
from ingest.load.jsonl import JsonlLoadResult, RowError, content_hash
from ingest.load.tts_files import read_text

QUESTION_COLUMNS = ["annotator", "case_id", "question_id", "reasonable", "agree_reference", "agree_trap", "comment"]
JUDGE_COLUMNS = ["annotator", "case_id", "question_id", "response_id", "judge_model", "judge_accuracy_score",
                 "judge_htr_score", "human_accuracy_score", "human_htr_score", "comment"]
ANSWERS = {"yes": "yes", "no": "no", "na": "na", "n/a": "na", "": None}
SCORES = {"0": 0.0, "0.0": 0.0, "0.5": 0.5, "1": 1.0, "1.0": 1.0, "": None}


def _assignments(con) -> dict[tuple[str, str], str]:
    """{(annotator, case_id): the newest design that assigns that case to that annotator}."""
    rows = con.execute("""
        select a.annotator, a.case_id, a.design_id from raw.validation_assignments a
        inner join raw.validation_designs d using (design_id) order by d.created_at""").fetchall()
    return {(annotator, case_id): design for annotator, case_id, design in rows}


def _check(row: dict, columns: list[str], assigned: dict, questions: dict[str, tuple[str, str]]) -> tuple[str, str, dict]:
    """(design_id, cohort, clean values) of one row, or RowError."""
    annotator, case_id, question_id = (row.get(c, "").strip() for c in ("annotator", "case_id", "question_id"))
    if not annotator or not any(a == annotator for a, _ in assigned):
        raise RowError("annotator", f"{annotator!r} is not an annotator of any validation design",
                       "use the annotator name of your packet (hindsight validation export)")
    design = assigned.get((annotator, case_id))
    if design is None:
        raise RowError("case_id", f"case {case_id!r} is not assigned to {annotator}", "keep the rows of your own packet")
    if questions.get(question_id, (None, None))[1] != case_id:
        raise RowError("question_id", f"{question_id!r} is not a question of case {case_id}",
                       "keep question_id as the packet gives it")
    values = {}
    for column in columns[3:]:
        raw = (row.get(column) or "").strip()
        if column == "comment" or column in ("response_id", "judge_model"):
            values[column] = raw or None
        elif column.endswith("_score"):
            if raw not in SCORES:
                raise RowError(column, f"{raw!r} is not a score", "use 0, 0.5 or 1, or leave it empty")
            values[column] = SCORES[raw]
        else:
            if raw.lower() not in ANSWERS:
                raise RowError(column, f"{raw!r} is not an answer", "use yes, no or na (not applicable), or leave it empty")
            values[column] = ANSWERS[raw.lower()]
    return design, questions[question_id][0], {"annotator": annotator, "case_id": case_id, "question_id": question_id, **values}


def load_annotations(con, path: Path) -> JsonlLoadResult:
    if not path.exists():
        raise InputError(path, "file not found", "give the path of a filled packet CSV")
    text, _ = read_text(path)
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    if header == QUESTION_COLUMNS or set(QUESTION_COLUMNS) <= set(header) and "judge_model" not in header:
        kind, columns, table = "annotations", QUESTION_COLUMNS, "raw.annotations"
    elif set(JUDGE_COLUMNS) <= set(header):
        kind, columns, table = "judge_checks", JUDGE_COLUMNS, "raw.judge_checks"
    else:
        raise InputError(path, f"header {','.join(header)!r} is neither packet's",
                         f"keep the header of the packet CSV: {','.join(QUESTION_COLUMNS)} (or the judge-check packet's)",
                         line=1)
    assigned = _assignments(con)
    if not assigned:
        raise InputError(path, "no validation design in the warehouse", "draw one first: hindsight validation sample --model …")
    questions = {q: (cohort, case) for q, cohort, case in con.execute(
        "select question_id, cohort, case_id from raw.questions").fetchall()}
    stored = {r[0] for r in con.execute(f"select content_sha256 from {table}").fetchall()}
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    result = JsonlLoadResult(None, str(path))
    good, bad = [], []
    for line, row in enumerate(reader, start=2):
        row = {(k or "").strip(): v for k, v in row.items()}
        try:
            design, cohort, values = _check(row, columns, assigned, questions)
        except RowError as error:
            bad.append((line, error, ",".join((row.get(c) or "") for c in columns)))
            continue
        digest = content_hash(design, *(values[c] for c in columns))
        if digest in stored:
            result.duplicates += 1
            continue
        stored.add(digest)
        good.append([design, cohort, *(values[c] for c in columns), digest, line])
    if not good and not bad:
        # nothing new: no load is registered, so loading the same file again leaves no trace
        found = con.execute("select max(load_id) from raw.loads where kind = ? and source_file = ?", [kind, str(path)]).fetchone()
        result.load_id, result.already_loaded = found[0], found[0] is not None
        return result
    con.execute("begin transaction")
    result.load_id = next_load_id(con)
    con.execute("insert into raw.loads values (?, ?, null, null, null, ?, null, 'loaded', null, ?, ?)",
                [result.load_id, kind, str(path), len(good), now])
    if good:
        insert_rows(con, table, [[result.load_id, str(path), row[-1], *row[:-1], now] for row in good])
    for line, error, record in bad:
        con.execute("insert into raw.rejected_rows values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [result.load_id, kind, str(path), line, error.field, error.reason, error.fix, record, now])
        result.errors.append(InputError(path, f"{error.field}: {error.reason}", error.fix, line=line))
    con.execute("commit")
    result.inserted = len(good)
    return result
