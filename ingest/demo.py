"""`hindsight demo`: the main job on the embedded, fictional demo corpus.

Reads nothing outside the clone: loads both demo cohorts and their
questions into the warehouse named by HINDSIGHT_DB, runs `dbt build`, and
prints a short summary from the public marts. Loads are idempotent, so
running it again adds nothing.
"""
from __future__ import annotations

from pathlib import Path

from ingest.build import build
from ingest.db import connect, warehouse_path
from ingest.load_cases import load_cases
from ingest.load_questions import load_questions
from ingest.status import _table

CORPUS = Path(__file__).resolve().parent / "demo_corpus"
COHORTS = ("sepsis", "glp1")


def load_demo(db: Path) -> None:
    with connect(db) as con:
        for cohort in COHORTS:
            base = CORPUS / cohort
            load_cases(con, cohort, base / "narratives", {"H": base / "tts_h", "L": base / "tts_l"})
        result = load_questions(con, CORPUS / "questions.jsonl")
        if result.errors:
            raise RuntimeError("demo questions were rejected: " + "; ".join(map(str, result.errors)))


def summary(db: Path) -> str:
    with connect(db, read_only=True) as con:
        lines = [f"warehouse: {db}", "", "cases (dim_cases):"]
        lines += _table(con, """
            select cohort, count(*) as cases, count(*) filter (where has_narrative) as with_narrative,
                   sum(n_reference_events) as h_events, sum(n_questions) as questions
            from dim_cases group by cohort order by cohort""")
        lines += ["", "TTS records by status (agg_tts_quality):"]
        lines += _table(con, """
            select cohort, source, status, coalesce(reason, '') as reason, n_lines
            from agg_tts_quality order by cohort, source, status, reason""")
        lines += ["", "cutoff position RelPos per cohort (agg_relpos, paper Table D.1):"]
        lines += _table(con, """
            select cohort, n, n_undefined, round(mean, 3) as mean, round(median, 3) as median,
                   round(sd, 3) as sd, round(min, 3) as min, round(max, 3) as max
            from agg_relpos order by cohort""")
        lines += ["", "answer requests per condition (fct_answer_requests; 3.x appear once synthetic narratives exist):"]
        lines += _table(con, """
            select condition, count(*) filter (where visibility = 'full') as full,
                   count(*) filter (where visibility = 'masked') as masked,
                   count(distinct question_id) as questions
            from fct_answer_requests group by condition order by condition""")
        n_narr = con.execute("select count(*) from fct_narrative_requests").fetchone()[0]
        lines += ["", f"synthetic-narrative requests awaiting a model (fct_narrative_requests): {n_narr}"]
    return "\n".join(lines)


def run_demo() -> int:
    db = warehouse_path()
    print(f"hindsight demo: loading the fictional demo corpus into {db}")
    load_demo(db)
    print("hindsight demo: dbt build (models, data tests, unit tests)")
    if not build(db):
        print("hindsight demo: dbt build failed; see the output above")
        return 1
    print()
    print(summary(db))
    return 0
