"""`hindsight demo`: the main job on the embedded, fictional demo corpus.

Reads nothing outside the clone: loads both demo cohorts and their
questions, and a fictional HindsightBench panel (ingest/llm/simulators/panel.py),
into the warehouse named by HINDSIGHT_DB; labelled simulators answer; simulated
auditees (ingest/llm/simulators/auditees.py) are audited through the runner
(register, smoke tier, inspection, full protocol); `dbt build` refreshes the
marts; it prints a summary, the metrics table and the audit rows and writes the
HTML report. Loads, answers and audits are idempotent, so running it again adds
nothing.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from ingest.build import build
from ingest.db import connect, serve_path, warehouse_path
from ingest.llm.answer import answer_requests, generate_narratives
from ingest.llm.hb_audit_runner import Registration, inspected, register, run_audit
from ingest.llm.judge import judge
from ingest.llm.simulators.annotators import fill_packet
from ingest.llm.simulators.panel import write_panel
from ingest.load.annotations import load_annotations
from ingest.load.cases import load_cases
from ingest.load.hindsightbench import load_hindsightbench
from ingest.load.questions import load_questions
from ingest.publish.hb_inspection import accept
from ingest.publish.report import write_report
from ingest.publish.validation_packets import export_packets
from ingest.stats.validation_design import DesignParams, create_design
from ingest.status import text_table

CORPUS = Path(__file__).resolve().parent / "corpus"
COHORTS = ("sepsis", "glp1")
# labelled simulators: a model that never uses hindsight, two with a planted
# trap rate under full visibility (the estimators must recover it) and a noisy
# one; each writes its own condition-3 narratives (paper §3.4) and answers
SIMULATORS = ("sim:prospective", "sim:hindsight@0.3", "sim:hindsight@0.6", "sim:noise@0.2")
WARNING_ANSWERERS = ("sim:hindsight@0.3",)
CLINICAL_ONLY = ["--exclude", *(f"path:models/{layer}/hindsightbench" for layer in ("staging", "intermediate", "marts"))]
JUDGE = "sim:exact-match"   # a labelled exact-match judge for the free responses
# simulated auditees and the tier each is audited at (ingest/llm/simulators/auditees.py: planted triggers
# and cutoffs); the first also asks the W72 control arm
AUDITS = (("sim:audit-trigger", "full"), ("sim:audit-recall-only", "full-1rep"), ("sim:audit-late", "full"),
          ("sim:audit-guessing", "reduced"), ("sim:audit-fragile", "full-1rep"), ("sim:audit-trigger-bf16", "full"))
# the robustness checks' own inputs: audit-trigger-bf16 is declared a serving configuration of
# audit-trigger (agg_hb_serving_stability), and audit-trigger is re-probed for the LAP sensitivity check
SERVING_VARIANTS = {"audit-trigger-bf16": "audit-trigger"}
REPROBED = ("audit-trigger",)
# human validation (Appendix G): the error-enriched sample of the planted-hindsight model, assessed by
# four simulated annotators (labelled) who agree at the planted rates of ingest/llm/simulators/annotators.py
VALIDATION = DesignParams("sim:hindsight@0.3", fraction=0.5, annotators=(
    "simulated-annotator-1", "simulated-annotator-2", "simulated-annotator-3", "simulated-annotator-4"))


def load_demo(db: Path) -> None:
    with connect(db) as con:
        for cohort in COHORTS:
            base = CORPUS / cohort
            load_cases(con, cohort, base / "narratives", {"H": base / "tts_h", "L": base / "tts_l"})
        result = load_questions(con, CORPUS / "questions.jsonl")
        if result.errors:
            raise RuntimeError("demo questions were rejected: " + "; ".join(map(str, result.errors)))
        with tempfile.TemporaryDirectory(prefix="hindsight-demo-audit-") as release:
            load_hindsightbench(con, write_panel(Path(release)))


def summary(db: Path) -> str:
    with connect(db, read_only=True) as con:
        lines = [f"warehouse: {db}", "", "cases (dim_cases):"]
        lines += text_table(con, """
            select cohort, count(*) as cases, count(*) filter (where has_narrative) as with_narrative,
                   sum(n_reference_events) as h_events, sum(n_questions) as questions
            from dim_cases group by cohort order by cohort""")
        lines += ["", "TTS records by status (agg_tts_quality):"]
        lines += text_table(con, """
            select cohort, source, status, coalesce(reason, '') as reason, n_lines
            from agg_tts_quality order by cohort, source, status, reason""")
        lines += ["", "cutoff position RelPos per cohort (agg_relpos, paper Table D.1):"]
        lines += text_table(con, """
            select cohort, n, n_undefined, round(mean, 3) as mean, round(median, 3) as median,
                   round(sd, 3) as sd, round(min, 3) as min, round(max, 3) as max
            from agg_relpos order by cohort""")
        lines += ["", "answer requests per condition (fct_answer_requests; 3.x appear once synthetic narratives exist):"]
        lines += text_table(con, """
            select condition, count(*) filter (where visibility = 'full') as full,
                   count(*) filter (where visibility = 'masked') as masked,
                   count(distinct question_id) as questions
            from fct_answer_requests group by condition order by condition""")
        n_narr = con.execute("select count(*) from fct_narrative_requests").fetchone()[0]
        lines += ["", f"condition-3 narrative scopes (fct_narrative_requests): {n_narr}"]
    return "\n".join(lines)


def simulate_demo(db: Path, phase: str) -> None:
    """phase `narratives`: condition-3 narratives; `answers`: every standard request (and the warning
    requests of WARNING_ANSWERERS); `judgments`: the free responses."""
    with connect(db) as con:
        if phase == "narratives":
            for name in SIMULATORS:
                generate_narratives(con, name)
        elif phase == "answers":
            for name in SIMULATORS:
                answer_requests(con, name, variants=["standard"])
            for name in WARNING_ANSWERERS:
                answer_requests(con, name, variants=["warning"])
        if phase == "judgments":
            judge(con, JUDGE)
        if phase == "audits":
            for spec, tier in AUDITS:
                key = spec.partition(":")[2]
                register(con, Registration(key, "sim", spec, display=f"{key} (simulated)", tier=tier,
                                           serving_quantization="simulated bf16" if key in SERVING_VARIANTS else "simulated",
                                           sampling="protocol profiles (hb_arm, hb_date_probe, hb_lap)",
                                           serving_variant_of=SERVING_VARIANTS.get(key)))
                run_audit(con, spec, "smoke", key)
                if not inspected(con, key):
                    accept(con, key, "demo: simulated auditee, smoke replies parsed")
                run_audit(con, spec, tier, key, concurrency=32, control=key == "audit-trigger")
                if key in REPROBED:
                    run_audit(con, spec, "lap-sensitivity", key, concurrency=32)
        if phase == "validation":
            create_design(con, VALIDATION)
            packets = db.parent / f"{db.stem}.validation-packets"
            traps = {q: t is not None for q, t in con.execute("select question_id, hindsight_trap from dim_questions").fetchall()}
            for path in export_packets(con, packets, judge_sample=2):
                if path.suffix == ".csv":
                    load_annotations(con, fill_packet(path, traps))


def validation_text(db: Path) -> str:
    """Table G.1 of the demo's validation design (every cohort together)."""
    with connect(db, read_only=True) as con:
        lines = ["human validation, Table G.1 (agg_validation; simulated annotators; estimate [95% case-clustered CI]):"]
        lines += text_table(con, """
            select item || coalesce(' (' || judge_model || ')', '') as item, statistic,
                   printf('%.3f [%.3f, %.3f]', estimate, ci_low, ci_high) as estimate,
                   n_questions, n_cases, n_assessments
            from agg_validation where cohort = 'all' order by item, statistic""")
    return "\n".join(lines)


def audit_text(db: Path) -> str:
    """The simulated auditees' audit rows (agg_hb_audit_rows), beside what each had planted."""
    with connect(db, read_only=True) as con:
        lines = ["HindsightBench audit rows of the simulated auditees (agg_hb_audit_rows; planted: audit-trigger "
                 "E2 ~ .30 to 2024-06, audit-recall-only no trigger to 2023-04, audit-late E2 ~ .20 to 2025-09, "
                 "audit-guessing at chance):"]
        lines += text_table(con, """
            select model_key, tier, cells, round(valid_sketch_rate, 3) as valid,
                   printf('%+.3f [%+.3f, %+.3f]', e2_est, e2_lo, e2_hi) as e2,
                   printf('%+.3f', e3_est) as e3, empirical_cutoff as cutoff, lap_at_chance,
                   round(rec_pre_year, 3) as rec_pre, parser_version
            from agg_hb_audit_rows where model_key like 'audit-%' order by model_key""")
        calls = con.execute("select count(*) from raw.llm_calls where purpose like 'hb_%'").fetchone()[0]
        lines.append(f"  ({calls} calls through the runner; `hindsight audit plan --model sim:audit-trigger --tier full` "
                     "shows them all stored)")
        lines.append("robustness of each row (agg_hb_robustness; planted: audit-fragile's trigger fires in the GFC months only, "
                     "audit-trigger-bf16 is a weaker serving configuration of audit-trigger):")
        lines += text_table(con, """
            select model_key, printf('%+.3f..%+.3f', e2_min, e2_max) as e2_range, e2_sign_flips as e2_flips,
                   round(e2_min_retained_share, 2) as e2_kept_without_event, cutoff_theta_displacement_max as cutoff_dtheta,
                   cutoff_reprobe_displacement_max as cutoff_reprobes, jk_agree_pct as jk_agree, serving_verdict,
                   coalesce(failed_checks, 'pass') as checks
            from agg_hb_robustness where model_key like 'audit-%' order by model_key""")
    return "\n".join(lines)


def metricstext_table(db: Path) -> str:
    """The paper's Figure 3/4 numbers as a table: estimate [95% CI], * when the CI excludes 0 (‡ when it does
    over too few cases for the CI to cover 95%)."""
    metrics = [("acc", "full", "Acc F"), ("acc", "masked", "Acc M"), ("htr", "full", "HTR F"), ("htr", "masked", "HTR M"),
               ("delta_acc", "paired", "dAcc"), ("delta_htr", "paired", "dHTR"), ("air", "paired", "AIR"), ("hbr", "paired", "HBR")]
    with connect(db, read_only=True) as con:
        rows = con.execute("""
            select cohort, model, condition, metric, visibility, estimate, ci_low, ci_high, significant, few_cases
            from agg_metrics where prompt_variant = 'standard'""").fetchall()
        replicates, seed = con.execute(
            "select max(bootstrap_replicates), max(bootstrap_seed) from agg_metrics").fetchone()
    cells = {(c, m, k, met, vis): (est, lo, hi, sig, few) for c, m, k, met, vis, est, lo, hi, sig, few in rows}
    lines = [f"metrics with 95% case-clustered bootstrap CIs (agg_metrics; B = {replicates}, seed {seed}; "
             "* = CI excludes 0; ‡ = it does, over too few cases for the CI to cover 95%):"]
    for cohort, model in sorted({(c, m) for c, m, *_ in rows}):
        lines += ["", f"  {cohort} / {model}"]
        header = ["cond"] + [label for *_, label in metrics]
        table = [header]
        for condition in sorted({k for c, m, k, *_ in rows if (c, m) == (cohort, model)}, key=float):
            line = [condition]
            for metric, visibility, _ in metrics:
                cell = cells.get((cohort, model, condition, metric, visibility))
                if cell is None or cell[0] is None:
                    line.append("")
                elif cell[1] is None:                                   # one case: no interval
                    line.append(f"{cell[0]:.2f} [1 case]")
                else:
                    line.append(f"{cell[0]:.2f} [{cell[1]:.2f},{cell[2]:.2f}]{('‡' if cell[4] else '*') if cell[3] else ''}")
            table.append(line)
        widths = [max(len(r[i]) for r in table) for i in range(len(header))]
        lines += ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in table]
    return "\n".join(lines)


def run_demo(report_dir: Path = Path("reports")) -> int:
    db = warehouse_path()
    print(f"hindsight demo: loading the fictional demo corpus into {db}")
    load_demo(db)
    # (label, simulator phase or None for a build, dbt arguments); the audit marts do not depend on
    # the clinical steps, so only the last build computes them
    steps = [("dbt build: requests", None, CLINICAL_ONLY),
             ("simulators write condition-3 narratives", "narratives", None),
             ("dbt build: condition-3 requests", None, CLINICAL_ONLY),
             ("simulators answer every request", "answers", None),
             ("dbt build: scores", None, CLINICAL_ONLY), (f"{JUDGE} judges the free responses", "judgments", None),
             ("dbt build: judged scores", None, CLINICAL_ONLY),
             ("human validation: error-enriched sample, packets, simulated annotators", "validation", None),
             ("dbt build: HindsightBench requests", None, ["--select", "+fct_hb_requests", "+int_hb_dates"]),
             ("HindsightBench: audit the simulated models (register, smoke, inspect, tier) through the runner", "audits", None),
             ("dbt build: scores, paired metrics, bootstrap CIs, HindsightBench audit", None, [])]
    for label, phase, dbt_args in steps:
        print(f"hindsight demo: {label}")
        if phase:
            simulate_demo(db, phase)
        elif not build(db, dbt_args):
            print("hindsight demo: dbt build failed; see the output above")
            return 1
    print()
    print(summary(db))
    print()
    print(metricstext_table(db))
    print()
    print(validation_text(db))
    print()
    print(audit_text(db))
    print()
    print(f"hindsight demo: report written to {write_report(db, report_dir).resolve()}")
    print(f"hindsight demo: BI tools and notebooks connect read-only to {serve_path(db)}, the marts every build publishes")
    print("hindsight demo: from any number to the evidence behind it: `hindsight explore`, then open http://127.0.0.1:8765/")
    return 0
