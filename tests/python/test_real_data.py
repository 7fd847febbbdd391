"""Real T2S2 files: every record accounted for, quarantine counts against an
independent count, and the masking and RelPos invariants on real timelines.

The independent counts below re-read the files with plain Python rules,
without the loader or the SQL classifier.
"""
from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import assert_dbt_passed, hindsight, new_warehouse, query, require_shared, scalar, write_jsonl
from ingest.publish.marts import public_marts

pytestmark = pytest.mark.slow

NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
YEAR = re.compile(r"^[-+–]\s+(1[89]|20)\d\d$")
RANGE = re.compile(r"^[+-]?[\d,.]+\s*([a-z]+\s*)?(-|–|—|to)\s*[+-]?[\d,.]+(\s*[a-z]+)?$", re.I)
MARKUP_START = ("```", "~~~", "\\", "#", "{", "}", "</think>", "<think>")


def cohorts():
    s40 = require_shared("t2s2-clinician", "annotations", "sepsis-40")
    s100 = require_shared("t2s2", "sepsis-100")
    s10 = require_shared("t2s2", "sepsis-10")
    return {
        # the earlier release's messiest variants: markdown, LaTeX, code, prose, whole-table files
        "sepsis10": (s10 / "body", {"H": s10 / "l33_70b_annotations", "L": s10 / "phi4",
                                   "qwq": s10 / "qwq_annotations", "l31_8b": s10 / "l31_8b_annotations",
                                   "ds": s10 / "ds_l33_70b_annotations", "qwen": s10 / "qwen_72b_annotations",
                                   "phi4c": s10 / "phi4_cleaner",
                                   "typing": s10 / "l33_70b_annotations_ablate_wintervaltyping"}),
        "sepsis40": (s40 / "body", {"H": s40 / "sepsis-40_manual", "L": s40 / "sepsis-40_l3370b_tts"}),
        "sepsis100": (s100 / "body", {"H": s100 / "l33_70b_annotations", "L": s100 / "l31_8b_annotations"}),
    }


def chosen_file(directory: Path, case_id: str) -> Path:
    for suffix in (".bsv", ".json", ".jsonl", ".csv"):
        for stem in (f"{case_id}_body", case_id):
            if (directory / f"{stem}{suffix}").exists():
                return directory / f"{stem}{suffix}"
    raise FileNotFoundError(case_id)


def independent_records(path: Path) -> list[tuple[str, str | None]]:
    """(event, time) per record, by the plain rules of the issue."""
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    if path.suffix == ".bsv":
        out = []
        for line in text.splitlines():
            if not line.strip():
                continue
            cleaned = re.sub(r"(\s*(\\hline|\\\\|\\))+\s*$", "", line.rstrip()).strip()
            latex_row = " & " in cleaned and "|" not in cleaned
            if line.strip().startswith(MARKUP_START) or cleaned.startswith(MARKUP_START) or "**" in cleaned or cleaned.startswith("|") or latex_row:
                out.append(("<markup>", None))
                continue
            parts = cleaned.split("|")
            out.append((parts[0].strip(), parts[1].strip() if len(parts) == 2 else None if len(parts) == 1 else "<extra>"))
        return out
    rows = [r for r in csv.reader(text.splitlines()) if r and any(c.strip() for c in r)]
    return [(r[0].strip(), r[1].strip() if len(r) == 2 else None) for r in rows[1:]]


def valid_events(path: Path) -> list[float]:
    return [float(t) for e, t in independent_records(path) if e and e != "<markup>" and t and NUMBER.match(t)]


def timeline(path: Path) -> list[tuple[float, str]]:
    """Valid (time, event) rows in chronological order, ties in file order (the paper's sort)."""
    rows = [(float(t), e) for e, t in independent_records(path) if e and e != "<markup>" and t and NUMBER.match(t)]
    return sorted(rows, key=lambda row: row[0])      # a stable sort keeps the file order within a time


def same_text(a: str, b: str) -> bool:
    words = lambda text: re.sub(r"[^0-9a-z]+", " ", text.lower()).split()   # noqa: E731
    return words(a) == words(b)


def load_real_cohorts(db: Path) -> Path:
    """The shared T2S2 cohorts' cases and TTS into warehouse DB, and the questions below; their file."""
    questions = []
    for cohort, (body, sources) in cohorts().items():
        args = ["load", "cases", "--cohort", cohort, "--narratives", str(body)]
        for name, folder in sources.items():
            args += ["--tts", f"{name}={folder}"]
        hindsight(db, *args)
        # three questions per case with cutoffs spread over the H timeline, one before its start, and
        # one whose cutoff event is the first of the events tied at the most crowded time (often admission)
        for narrative in sorted(body.glob("*.txt")):
            case_id = narrative.stem.removesuffix("_body")
            events = timeline(chosen_file(sources["H"], case_id))
            times = [t for t, _ in events]
            if not times:
                continue
            crowded = Counter(times).most_common(1)[0][0]
            tied = next(e for t, e in events if t == crowded)
            for label, cutoff in [("early", times[0] - 1), ("middle", times[len(times) // 2]), ("late", times[-1]),
                                  (tied.upper() + " ", crowded)]:
                questions.append({
                    "question_id": f"{cohort}-{case_id}-{label.strip()[:40]}", "cohort": cohort, "case_id": case_id,
                    "question": "Was the patient septic?", "format": "true/false", "eval_target": "both",
                    "early_cutoff": {"event": label, "time": cutoff}, "correct_answer": "true", "hindsight_trap": "false"})
    path = write_jsonl(db.parent / "questions.jsonl", questions)
    hindsight(db, "load", "questions", path)
    return path


@pytest.fixture(scope="module")
def real_warehouse(tmp_path_factory):
    db = new_warehouse(tmp_path_factory.mktemp("real"))
    load_real_cohorts(db)
    hindsight(db, "build")
    assert_dbt_passed(db)
    return db


def test_every_record_of_every_file_is_accounted_for_once(real_warehouse):
    for cohort, (_, sources) in cohorts().items():
        for source, folder in sources.items():
            cases = {p.stem.removesuffix("_body") for p in folder.iterdir()}
            expected = sum(len(independent_records(chosen_file(folder, c))) for c in cases)
            in_raw = scalar(real_warehouse, "select count(*) from raw.tts_records where cohort = ? and source = ?", [cohort, source])
            in_mart = scalar(real_warehouse, "select sum(n_lines) from agg_tts_quality where cohort = ? and source = ?", [cohort, source])
            assert in_raw == in_mart == expected, (cohort, source)


def test_quarantine_counts_match_an_independent_count(real_warehouse):
    for cohort, (_, sources) in cohorts().items():
        for source, folder in sources.items():
            independent = Counter()
            rejected_files = {r[0] for r in query(real_warehouse,
                "select source_file from raw.loads where status = 'rejected' and cohort = ? and source = ?", [cohort, source])}
            for case in {p.stem.removesuffix("_body") for p in folder.iterdir()}:
                path = chosen_file(folder, case)
                records = independent_records(path)
                if str(path.resolve()) in rejected_files:
                    independent["rejected_file"] += len(records)
                    continue
                for event, time in records:
                    if event and event != "<markup>" and time and NUMBER.match(time):
                        independent["valid"] += 1
                    elif time and YEAR.match(time):
                        independent["calendar_year"] += 1
                    elif time and RANGE.match(time) and not NUMBER.match(time):
                        independent["range"] += 1
                    elif event != "<markup>" and time is None:
                        independent["no_delimiter"] += 1
            mart = dict(query(real_warehouse, """
                select coalesce(reason, 'valid'), sum(n_lines) from agg_tts_quality
                where cohort = ? and source = ? group by all""", [cohort, source]))
            for reason in ("valid", "calendar_year", "range", "no_delimiter", "rejected_file"):
                assert mart.get(reason, 0) == independent[reason], (cohort, source, reason)


def test_known_malformations_of_the_real_files_are_quarantined(real_warehouse):
    reasons = {(cohort, reason): n for cohort, reason, n in query(real_warehouse,
        "select cohort, reason, sum(n_lines) from agg_tts_quality where status <> 'valid' group by all")}
    # sepsis-40 CSVs hold NA and -??? placeholders; sepsis-100 L holds calendar years and units
    assert reasons[("sepsis40", "placeholder")] == 4
    assert reasons[("sepsis100", "calendar_year")] == 40
    assert reasons[("sepsis100", "units")] == 34  # and `-6 months to -2 months` is a range
    # sepsis-10 variants hold every other kind the issue names
    for reason in ("markup", "header", "range", "arithmetic", "prose", "extra_fields", "no_delimiter", "rejected_file"):
        assert reasons.get(("sepsis10", reason), 0) > 0, reason
    years = query(real_warehouse, "select time_text from staging.stg_raw__tts_records where quarantine_reason = 'calendar_year' limit 3")
    assert all(YEAR.match(t) for (t,) in years)  # never read as -2002 hours


def test_masked_contexts_hold_exactly_the_events_at_or_before_the_cutoff(real_warehouse):
    rows = query(real_warehouse, """
        select r.cohort, r.case_id, r.tts_source, r.tts_json, q.cutoff_hours
        from fct_answer_requests r inner join dim_questions q using (question_id)
        where r.visibility = 'masked' and r.condition in ('2.1', '2.2') and r.prompt_variant = 'standard'""")
    assert len(rows) > 500
    sources = {c: s for c, (_, s) in cohorts().items()}
    for cohort, case_id, source, tts_json, cutoff in rows:
        shown = json.loads(tts_json)
        assert all(event["time"] <= cutoff for event in shown)
        expected = [t for t in valid_events(chosen_file(sources[cohort][source], case_id)) if t <= cutoff]
        assert len(shown) == len(expected), (cohort, case_id, source, cutoff)
        assert [e["time"] for e in shown] == sorted(e["time"] for e in shown)


def test_relpos_follows_the_documented_reading(real_warehouse):
    """RelPos = (k - 1) / (n - 1) with k the chronological index of the cutoff event (§3.5): the
    event at the cutoff time whose text matches early_cutoff.event; when none matches, the last event
    at or before the cutoff."""
    rows = query(real_warehouse, """select cohort, case_id, cutoff_event, cutoff_hours, relpos, relpos_undefined_reason,
                                           relpos_method from dim_questions""")
    sources = {c: s for c, (_, s) in cohorts().items()}
    assert len(rows) > 500
    matched = 0
    for cohort, case_id, event, cutoff, relpos, reason, method in rows:
        events = timeline(chosen_file(sources[cohort]["H"], case_id))
        n = len(events)
        own = [i for i, (t, e) in enumerate(events, start=1) if t == cutoff and same_text(e, event)]
        k = own[0] if own else sum(t <= cutoff for t, _ in events)
        if n < 2 or k == 0:
            assert relpos is None and reason is not None and method is None
        else:
            assert relpos == pytest.approx((k - 1) / (n - 1), abs=1e-12), (cohort, case_id, event)
            assert method == ("cutoff_event" if own else "last_event_at_cutoff")
            matched += bool(own)
    assert matched > 100
    tied = query(real_warehouse, """select count(*) from dim_questions
                                    where relpos_method = 'cutoff_event' and n_reference_events_at_cutoff > 1
                                      and relpos < (n_reference_events_at_cutoff - 1.0) / (n_reference_events - 1)""")
    assert tied[0][0] > 50          # the first of several tied events sits before the last of them
    summary = query(real_warehouse, """select cohort, n, n_undefined, min, max, n_cutoff_event_matched,
                                              n_cutoff_event_fallback from agg_relpos order by cohort""")
    for _cohort, n, n_undefined, low, high, n_matched, n_fallback in summary:
        assert n_undefined >= 1 and 0 <= low <= high <= 1 and n_matched > 0 and n_matched + n_fallback == n


def test_report_and_export_work_on_the_real_data_and_the_real_audit(real_warehouse, tmp_path):
    """Both protocols on real inputs: the T2S2 warehouse plus the published HindsightBench release,
    answered by labelled simulators, then `hindsight report` and `hindsight export`."""
    from ingest.publish.report import KINDS

    db = new_warehouse(tmp_path)
    db.write_bytes(real_warehouse.read_bytes())

    def run(*args):
        return hindsight(db, *args).stdout

    run("load", "hindsightbench", require_shared("hindsightbench"))
    run("answer", "--model", "sim:hindsight@0.3", "--variant", "standard", "--variant", "warning")
    run("answer", "--model", "sim:prospective", "--variant", "standard")
    run("build")
    assert_dbt_passed(db)
    out = run("report", "--out", tmp_path / "report")
    index = tmp_path / "report" / "index.html"
    assert f"report: {index.resolve()}" in out
    html = index.read_text()
    kinds = set(re.findall(r'data-kind="([a-z0-9-]+)"', html))
    assert set(KINDS) <= kinds and 'class="empty"' not in html
    shown = re.findall(r'<img src="figures/([^"]+)"', html)
    assert shown and sorted(shown) == sorted(p.name for p in (tmp_path / "report" / "figures").iterdir())
    assert "Llama" in html or "llama" in html            # the real audit rows are in the leaderboard
    run("export", "--format", "parquet", "--out", tmp_path / "export")
    assert sorted(p.stem for p in (tmp_path / "export").glob("*.parquet")) == sorted(public_marts())
