"""`hindsight validation export`: one packet per annotator of a validation design (Appendix G).

A packet is a CSV (the contract `hindsight validation load` reads: one row per assigned question,
answers empty) and a self-contained HTML page showing each assigned case's narrative and, per
question, the options, the reference answer and the hindsight trap with its explanation, where the
annotator answers reasonable / agree with reference / agree with trap (yes, no, not applicable) and
saves the CSV. With judge checks, a second CSV lists a sample of the cases' judged free-response
answers with the judge's scores for the annotator to confirm or correct. A packet never shows
another annotator's assessments (none are read).
"""
from __future__ import annotations

import csv
import html
import json
from pathlib import Path

from ingest.errors import InputError

QUESTION_COLUMNS = ["annotator", "case_id", "question_id", "reasonable", "agree_reference", "agree_trap", "comment"]
JUDGE_COLUMNS = ["annotator", "case_id", "question_id", "response_id", "judge_model", "judge_accuracy_score",
                 "judge_htr_score", "human_accuracy_score", "human_htr_score", "comment"]


def _design(con, design_id: str | None) -> tuple[str, list[str]]:
    rows = con.execute("select design_id, annotators from raw.validation_designs "
                       + ("where design_id = ? " if design_id else "") + "order by created_at desc limit 1",
                       [design_id] if design_id else []).fetchall()
    if not rows:
        raise InputError("--design", f"no validation design {design_id or ''}".strip(),
                         "draw one with `hindsight validation sample --model …` (see `hindsight status`)")
    return rows[0][0], json.loads(rows[0][1])


def _questions(con, design_id: str, annotator: str) -> list[dict]:
    cursor = con.execute("""
        select a.cohort, a.case_id, q.question_id, q.question, q.format, q.options_json, q.correct_answer,
               q.hindsight_trap, q.hindsight_trap_explanation, q.eval_target, n.narrative_text
        from raw.validation_assignments a
        inner join main.dim_questions q on q.cohort = a.cohort and q.case_id = a.case_id
        left join (select cohort, case_id, narrative_text from raw.narratives
                   qualify row_number() over (partition by cohort, case_id order by load_id desc) = 1) n
            on n.cohort = a.cohort and n.case_id = a.case_id
        where a.design_id = ? and a.annotator = ?
        order by a.cohort, a.case_id, q.question_id""", [design_id, annotator])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _judged(con, design_id: str, annotator: str, per_case: int) -> list[dict]:
    """Up to `per_case` judged free-response answers per assigned case (a stable pseudo-random pick)."""
    cursor = con.execute("""
        select a.case_id, f.question_id, f.response_id, f.judge_model, t.answer, f.acc, f.htr, f.model
        from raw.validation_assignments a
        inner join main.fct_answers f on f.cohort = a.cohort and f.case_id = a.case_id
        inner join main.fct_answer_texts t on t.response_id = f.response_id
        where a.design_id = ? and a.annotator = ? and f.format = 'free response' and f.judge_model is not null
          and f.is_latest_in_cell
        qualify row_number() over (partition by a.cohort, a.case_id order by md5(f.response_id || ?)) <= ?
        order by a.case_id, f.question_id, f.response_id""", [design_id, annotator, design_id, per_case])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _page(annotator: str, design_id: str, questions: list[dict], csv_name: str) -> str:
    cases: dict[str, list[dict]] = {}
    for q in questions:
        cases.setdefault(q["case_id"], []).append(q)
    blocks = []
    for case_id, items in cases.items():
        rows = []
        for q in items:
            options = json.loads(q["options_json"]) if q["options_json"] else None
            listed = "".join(f"<li>{html.escape(o)}</li>" for o in options) if options else ""
            trap = (f"<p><b>Hindsight trap:</b> {html.escape(q['hindsight_trap'])}"
                    f"<br><i>{html.escape(q['hindsight_trap_explanation'] or '')}</i></p>") if q["hindsight_trap"] else \
                "<p><b>Hindsight trap:</b> none (an accuracy question)</p>"
            choices = "".join(
                f"<fieldset><legend>{label}</legend>" + "".join(
                    f'<label><input type="radio" name="{q["question_id"]}|{field}" value="{v}"> {v}</label> '
                    for v in ("yes", "no", "na")) + "</fieldset>"
                for field, label in (("reasonable", "Clinically reasonable question?"),
                                     ("agree_reference", "Agree with the reference answer?"),
                                     ("agree_trap", "Agree with the hindsight-trap answer?")))
            rows.append(f'<section class="q" data-case="{html.escape(case_id)}" data-question="{html.escape(q["question_id"])}">'
                        f"<h3>{html.escape(q['question'])}</h3><p>{html.escape(q['format'])}</p><ol>{listed}</ol>"
                        f"<p><b>Reference answer:</b> {html.escape(str(q['correct_answer']))}</p>{trap}{choices}"
                        f'<label>Comment <input type="text" name="{q["question_id"]}|comment"></label></section>')
        narrative = html.escape(items[0]["narrative_text"] or "(no narrative loaded)")
        blocks.append(f"<article><h2>Case {html.escape(case_id)}</h2><details open><summary>Case report</summary>"
                      f"<pre>{narrative}</pre></details>{''.join(rows)}</article>")
    script = """
function save() {
  const header = %s;
  const rows = [header.join(',')];
  document.querySelectorAll('section.q').forEach(s => {
    const q = s.dataset.question, pick = f => (document.querySelector(`input[name="${q}|${f}"]:checked`) || {}).value || '';
    const comment = (document.querySelector(`input[name="${q}|comment"]`).value || '').replaceAll('"', '""');
    rows.push([%s, s.dataset.case, q, pick('reasonable'), pick('agree_reference'), pick('agree_trap'), '"' + comment + '"'].join(','));
  });
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([rows.join('\\n') + '\\n'], {type: 'text/csv'}));
  link.download = %s;
  link.click();
}""" % (json.dumps(QUESTION_COLUMNS), json.dumps(annotator), json.dumps(csv_name))
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Validation packet: {html.escape(annotator)}</title>
<style>body{{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
pre{{white-space:pre-wrap;background:#f6f6f6;padding:.8rem}}
section.q{{border-top:1px solid #ccc;padding:.6rem 0}}fieldset{{border:0;padding:0;margin:.2rem 0}}legend{{font-weight:600}}</style></head>
<body><h1>Validation packet for {html.escape(annotator)}</h1><p>Design {html.escape(design_id)}. For each question, answer the three
items (yes, no, or na when not applicable), then <button onclick="save()">save {html.escape(csv_name)}</button> and return the file.
You may instead fill in {html.escape(csv_name)} in a spreadsheet.</p>{''.join(blocks)}
<p><button onclick="save()">Save {html.escape(csv_name)}</button></p><script>{script}</script></body></html>"""


def export_packets(con, out: Path, design_id: str | None = None, judge_sample: int = 0) -> list[Path]:
    """Write each annotator's CSV and HTML (and judge-check CSV when `judge_sample` > 0); the paths."""
    design_id, annotators = _design(con, design_id)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for annotator in annotators:
        questions = _questions(con, design_id, annotator)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in annotator)
        csv_path, page_path = out / f"{safe}.csv", out / f"{safe}.html"
        with csv_path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(QUESTION_COLUMNS)
            writer.writerows([annotator, q["case_id"], q["question_id"], "", "", "", ""] for q in questions)
        page_path.write_text(_page(annotator, design_id, questions, csv_path.name), encoding="utf-8")
        written += [csv_path, page_path]
        if judge_sample > 0:
            judged = _judged(con, design_id, annotator, judge_sample)
            judge_path = out / f"{safe}_judge_checks.csv"
            with judge_path.open("w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle)
                writer.writerow(JUDGE_COLUMNS + ["answer"])
                writer.writerows([annotator, j["case_id"], j["question_id"], j["response_id"], j["judge_model"],
                                  j["acc"], j["htr"], "", "", "", j["answer"]] for j in judged)
            written.append(judge_path)
    return written
