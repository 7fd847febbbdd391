"""`hindsight report [--out DIR]`: the results of both protocols as a static site.

Every figure and table is drawn from the rows of one `analyses/report_*.sql`
query, and those queries read public marts only (refs are resolved to the
marts here, and anything else is refused), so `dbt build` followed by
`hindsight report` always agrees with the tables analysts query. The site is
DIR/index.html plus DIR/figures/*.svg: no script, no network.
"""
from __future__ import annotations

import hashlib
import pickle
import re
import shutil
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from importlib.metadata import version
from pathlib import Path

import duckdb
import jinja2
import pandas as pd

from ingest.config import __version__
from ingest.db import PROJECT_DIR
from ingest.errors import InputError
from ingest.publish import interval_figures, leaderboard
from ingest.publish.marts import public_marts
from ingest.publish.palette import CONDITIONS, condition_label
from ingest.serve.snapshots import open_marts
from ingest.stats.trust import is_true

ANALYSES = PROJECT_DIR / "analyses"
TEMPLATE = Path(__file__).with_name("report_template.html")
FIGURE_FILE = re.compile(r"^\d{2,}-[a-z0-9-]+\.svg$")
REF = re.compile(r"\{\{\s*ref\(\s*['\"]([A-Za-z0-9_]+)['\"]\s*\)\s*\}\}")
# Every kind of block a fully loaded warehouse shows (the browser test checks them on the demo).
KINDS = ["overview", "terms", "figure-3", "figure-4", "figure-e7", "figure-e8", "figure-e9", "figure-f1", "figure-f2",
         "figure-d1", "table-d1", "by-format", "by-eval-target", "tts-quarantine", "invalid-answers",
         "truncated-answers", "context-losses", "missing-pairs",
         "validation-table", "validation-design", "hb-leaderboard", "hb-robustness", "hb-effects", "hb-lap-heatmap", "provenance"]


@dataclass
class Block:
    kind: str
    title: str
    analyses: list[str]
    figure: str | None = None         # file name under figures/
    alt: str = ""
    table: str | None = None          # HTML of a table
    caption: str = ""


@dataclass
class Section:
    id: str
    title: str
    intro: str = ""
    blocks: list[Block] = field(default_factory=list)
    empty: str | None = None          # why there is nothing to show


def analysis_sql(name: str) -> str:
    """The analysis query with its refs resolved to the public marts (schema main)."""
    path = ANALYSES / f"{name}.sql"
    text = path.read_text()

    def resolve(match: re.Match) -> str:
        if match.group(1) not in public_marts():
            raise InputError(path, f"ref('{match.group(1)}') is not a public mart",
                             "report queries read the public marts only (access: public in models/marts/)")
        return match.group(1)

    sql = REF.sub(resolve, text)
    if "{{" in sql or "{%" in sql:
        raise InputError(path, "Jinja other than ref() in a report query", "use plain SQL and {{ ref('mart') }}")
    return sql


# what a drawn figure depends on besides its rows: the drawing code, what figures share, matplotlib
DRAWING = hashlib.sha256(b"".join(Path(__file__).with_name(f"{name}.py").read_bytes()
                                  for name in ("figures", "interval_figures", "palette"))
                         + version("matplotlib").encode()).hexdigest()


def _drawing_key(draw: partial) -> str:
    """What a figure is drawn from: the drawing function, and its arguments with each DataFrame taken
    by its columns and rows (not its index, which shifts when another model's rows come first)."""
    parts: list = [draw.func.__module__, draw.func.__qualname__]
    for value in [*draw.args, *sorted(draw.keywords.items())]:
        if isinstance(value, pd.DataFrame):
            value = (list(value.columns), pd.util.hash_pandas_object(value, index=False).tolist())
        parts.append(value)
    return hashlib.sha256(DRAWING.encode() + pickle.dumps(parts)).hexdigest()


def matplotlib_figure(name: str, *args):
    """The figure ingest.publish.figures.NAME draws of ARGS. Imported here, in the figure thread beside
    the queries, and only by a report that has such a figure: matplotlib's imports take 0.7 s."""
    from ingest.publish import figures
    return getattr(figures, name)(*args)


def _draw_and_save(draw: Callable, path: Path, keep: Path) -> None:
    drawn = draw()
    if isinstance(drawn, interval_figures.IntervalFigure):
        path.write_text(drawn.svg(), encoding="utf-8")
    else:
        from ingest.publish import figures
        figures.save(drawn, path)
    shutil.copyfile(path, keep)


class Report:
    """The report being written: its queries run here, its figures are drawn and saved by `pool` (one
    thread: see _figure_pool) while the queries go on; `wait` returns when every figure is on disk. A
    figure drawn by an earlier report into the same folder from the same rows with the same code is
    copied, not drawn again (DIR/.drawn/, keyed by a hash of the drawing call and its arguments;
    figures/ holds exactly the figures shown)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, out: Path, pool: Executor):
        self.con, self.out, self.pool = con, out, pool
        self.figures_dir = out / "figures"
        self.drawn_dir = out / ".drawn"
        self.drawn_dir.mkdir(parents=True, exist_ok=True)
        self.count = 0
        self.pending: list[Future] = []
        self.used: set[str] = set()

    def wait(self) -> None:
        """Every figure on disk; drawn figures this report did not use are forgotten."""
        for drawing in self.pending:
            drawing.result()        # a figure that failed fails the report, with its traceback
        for kept in self.drawn_dir.glob("*.svg"):
            if kept.name not in self.used:
                kept.unlink()

    def rows(self, name: str) -> pd.DataFrame:
        return self.con.execute(analysis_sql(name)).df()

    def figure(self, kind: str, title: str, analyses: list[str], draw: partial, alt: str, caption: str = "") -> Block:
        """A block with the figure `draw` makes (a partial of a figures function: it runs in the pool)."""
        self.count += 1
        file_name = f"{self.count:02d}-{kind}.svg"
        keep = self.drawn_dir / f"{_drawing_key(draw)}.svg"
        self.used.add(keep.name)
        if keep.exists():
            shutil.copyfile(keep, self.figures_dir / file_name)
        else:
            self.pending.append(self.pool.submit(_draw_and_save, draw, self.figures_dir / file_name, keep))
        return Block(kind, title, analyses, figure=file_name, alt=alt, caption=caption)

    def figure_or_note(self, kind: str, title: str, analysis: str, draw, alt: str, empty: str,
                       caption=None, nothing=None) -> Block:
        """The figure `draw` makes of the analysis's rows, or a line saying why there is none: no rows
        (`empty`), or rows with nothing to draw (`nothing`: (test of the rows, the line)), never empty axes."""
        rows = self.rows(analysis)
        if rows.empty:
            return Block(kind, title, [analysis], caption=empty)
        if nothing and nothing[0](rows):
            return Block(kind, title, [analysis], caption=nothing[1])
        return self.figure(kind, title, [analysis], partial(draw, rows), alt, caption(rows) if caption else "")


def _fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _interval(row, digits: int = 3) -> str:
    if pd.isna(row["estimate"]):
        return "—"
    text = f"{row['estimate']:.{digits}f} [{_fmt(row['ci_low'], digits)}, {_fmt(row['ci_high'], digits)}]"
    if not (row.get("significant") and row["visibility"] == "paired"):
        return text
    # over too few cases for the interval to cover 95%: ‡, never the bare †
    return text + ("‡" if is_true(row.get("few_cases")) else "†")


def _table(frame: pd.DataFrame, headers: dict[str, str] | None = None, classes: str = "numbers") -> str:
    frame = frame.copy()
    for column in frame.columns:
        frame[column] = [_fmt(v) for v in frame[column]]
    if headers:
        frame = frame.rename(columns=headers)
    return frame.to_html(index=False, border=0, classes=classes, escape=True)


def _metrics_table(cells: pd.DataFrame) -> str:
    """Conditions in rows, the paper's metrics in columns: estimate [95% CI], † if the CI excludes 0 (‡ if it
    does over too few cases)."""
    columns = [("acc", "full", "Acc full"), ("acc", "masked", "Acc masked"), ("htr", "full", "HTR full"),
               ("htr", "masked", "HTR masked"), ("delta_acc", "paired", "ΔAcc"), ("delta_htr", "paired", "ΔHTR"),
               ("air", "paired", "AIR"), ("hbr", "paired", "HBR")]
    found = {(row["condition"], row["metric"], row["visibility"]): row for row in cells.to_dict("records")}
    lines = []
    for condition in CONDITIONS:
        if not any(key[0] == condition for key in found):
            continue
        line = {"condition": condition_label(condition)}
        for metric, visibility, label in columns:
            hit = found.get((condition, metric, visibility))
            line[label] = _interval(hit) if hit is not None else "—"
        lines.append(line)
    return pd.DataFrame(lines).to_html(index=False, border=0, classes="numbers", escape=True)


VISIBILITY_SERIES = [("full", {"visibility": "full"}), ("masked", {"visibility": "masked"})]
PAIRED_ROWS = [("delta_htr", "paired"), ("air", "paired"), ("hbr", "paired")]
NO_ANSWERS = "No scored answers in agg_metrics yet: run `hindsight answer` and `hindsight build`."


def overview_section(report: Report) -> Section:
    section = Section("overview", "Overview", "Cohorts, cases, questions and the newest answer per cell.")
    section.blocks.append(Block("overview", "Warehouse contents", ["report_overview"],
                                table=_table(report.rows("report_overview"))))
    section.blocks.append(Block("terms", "Conditions and metrics", ["report_conditions_metrics"],
                                table=_table(report.rows("report_conditions_metrics"), classes="prose")))
    return section


def per_model_section(report: Report, standard: pd.DataFrame) -> Section:
    """Figures 3 and 4 for every answering model, one row of panels per cohort, and their numbers."""
    section = Section("per-model", "Figures 3 and 4: accuracy, hindsight trap rate and paired metrics per model",
                      "The paper's Figures 3 and 4 for every answering model (standard prompt), one row of "
                      "panels per cohort. Tables give the numbers behind each figure.",
                      empty=NO_ANSWERS if standard.empty else None)
    for model in sorted(standard["model"].unique()):
        mine = standard[standard["model"] == model]
        cohorts = sorted(mine["cohort"].unique())
        section.blocks.append(report.figure(
            "figure-3", f"Figure 3 — {model}: Acc and HTR per condition, full vs masked", ["report_metrics"],
            partial(interval_figures.individual_metrics, mine, cohorts, f"{model}: Acc and HTR per input condition", VISIBILITY_SERIES),
            f"Accuracy and hindsight trap rate of {model} per condition, full and masked, with 95% CIs"))
        section.blocks.append(report.figure(
            "figure-4", f"Figure 4 — {model}: ΔAcc, ΔHTR, AIR and HBR per paired condition", ["report_metrics"],
            partial(interval_figures.paired_metrics, mine, cohorts, f"{model}: hindsight-bias metrics per paired condition",
                                   [("paired", {"visibility": "paired"})]),
            f"Paired hindsight-bias metrics of {model} with 95% CIs"))
        for cohort in cohorts:
            section.blocks.append(Block("metrics-table", f"{model} — {cohort}: numbers", ["report_metrics"],
                                        table=_metrics_table(mine[mine["cohort"] == cohort])))
    return section


def cross_model_section(report: Report, standard: pd.DataFrame) -> Section:
    section = Section("cross-model", "Figures E.7–E.9: comparison across models",
                      "All models side by side, per cohort (standard prompt).",
                      empty=NO_ANSWERS if standard.empty else None)
    if standard.empty:
        return section
    cohorts, models = sorted(standard["cohort"].unique()), sorted(standard["model"].unique())
    for kind, title, rows in [
            ("figure-e7", "Figure E.7 — accuracy across models", [("acc", "full"), ("acc", "masked")]),
            ("figure-e8", "Figure E.8 — hindsight trap rate across models", [("htr", "full"), ("htr", "masked")]),
            ("figure-e9", "Figure E.9 — paired hindsight-bias metrics across models", PAIRED_ROWS)]:
        section.blocks.append(report.figure(kind, title, ["report_metrics"],
                                            partial(interval_figures.cross_model, standard, cohorts, models, rows, title),
                                            f"{title}, models as coloured series with 95% CIs"))
    return section


def prompt_variant_section(report: Report, metrics: pd.DataFrame) -> Section:
    """Appendix F for every model answered under both prompts."""
    both = [m for m in sorted(metrics["model"].unique())
            if set(metrics[metrics["model"] == m]["prompt_variant"]) >= {"standard", "warning"}]
    section = Section("prompt-variants", "Appendix F: explicit hindsight warning",
                      "Models answered under both the standard prompt and the warning prompt (Appendix C).",
                      empty=None if both else "No model has answers under both prompt variants: run `hindsight "
                      "answer --variant warning` for a model answered with the standard prompt.")
    for model in both:
        mine = metrics[metrics["model"] == model]
        cohorts = sorted(mine["cohort"].unique())
        series = [(f"{v}, {p}", {"visibility": v, "prompt_variant": p})
                  for p in ("standard", "warning") for v in ("full", "masked")]
        section.blocks.append(report.figure(
            "figure-f1", f"Figure F.1 — {model}: Acc and HTR under both prompt versions", ["report_metrics"],
            partial(interval_figures.individual_metrics, mine, cohorts, f"{model}: standard vs warning prompt", series),
            f"Accuracy and HTR of {model} under the standard and warning prompts with 95% CIs"))
        section.blocks.append(report.figure(
            "figure-f2", f"Figure F.2 — {model}: paired metrics under both prompt versions", ["report_metrics"],
            partial(interval_figures.paired_metrics, mine, cohorts, f"{model}: standard vs warning prompt",
                                   [(p, {"prompt_variant": p}) for p in ("standard", "warning")]),
            f"Paired metrics of {model} under both prompts with 95% CIs"))
    return section


def cutoff_section(report: Report) -> Section:
    section = Section("cutoff-positions", "Appendix D: where the masking cutoffs fall",
                      "RelPos(q): chronological index of the cutoff event in the reference TTS, scaled to [0, 1].")
    section.blocks.append(report.figure_or_note(
        "figure-d1", "Figure D.1 — ECDF of relative cutoff positions", "report_relpos_ecdf", partial(matplotlib_figure, "relpos_ecdf"),
        "Empirical CDF of RelPos per cohort", "No question has a defined RelPos yet: load cases and questions."))
    section.blocks.append(Block("table-d1", "Table D.1 — distribution of RelPos(q)", ["report_relpos_table"],
                                table=_table(report.rows("report_relpos_table"))))
    return section


def breakdown_section(report: Report) -> Section:
    section = Section("breakdowns", "Breakdowns by question format and evaluation target",
                      "Standard prompt; one figure per cohort, models in rows.")
    for kind, name, label, columns in [
            ("by-format", "report_metrics_by_format", "question format", PAIRED_ROWS),
            ("by-eval-target", "report_metrics_by_eval_target", "evaluation target",
             [("acc", "masked"), ("htr", "full"), ("delta_htr", "paired"), ("air", "paired")])]:
        cells = report.rows(name)
        for cohort in sorted(cells["cohort"].unique()):
            mine = cells[cells["cohort"] == cohort]
            title = f"{cohort}: metrics by {label}"
            section.blocks.append(report.figure(kind, title, [name],
                                                partial(interval_figures.sliced, mine, sorted(mine["model"].unique()), columns, title),
                                                f"{title}, with 95% CIs"))
    section.empty = None if section.blocks else NO_ANSWERS
    return section


def quality_section(report: Report) -> Section:
    section = Section("data-quality", "Data quality",
                      "What was left out of the metrics and why: quarantined TTS lines, unparseable answers, "
                      "replies cut off by the token limit, requests beyond a model's context window, and paired "
                      "questions missing one side.")
    section.blocks.append(report.figure_or_note(
        "tts-quarantine", "Quarantined TTS lines by reason", "report_tts_quarantine", partial(matplotlib_figure, "quarantine_bars"),
        "Quarantined TTS lines per cohort and source, by reason", "No TTS line was quarantined."))
    section.blocks.append(report.figure_or_note(
        "invalid-answers", "Answers that did not parse", "report_invalid_answers", partial(matplotlib_figure, "invalid_answer_bars"),
        "Share of invalid answers per cohort, model and format", "No answers stored yet.",
        caption=lambda rows: f"{int(rows['n_invalid'].sum())} of {int(rows['n_answers'].sum())} answers invalid.",
        nothing=(lambda rows: rows["n_invalid"].sum() == 0,
                 "No invalid answers: every stored answer parsed against its question's format.")))
    truncation = report.rows("report_truncation")
    cut = truncation[truncation["n_truncated"] > 0]
    section.blocks.append(Block(
        "truncated-answers", "Replies cut off by the token limit", ["report_truncation"],
        table=_table(cut) if not cut.empty else None,
        caption=("No answers stored yet." if truncation.empty else
                 f"{int(cut['n_truncated'].sum())} of {int(truncation['n_answers'].sum())} replies ended on the token "
                 f"limit ({int(cut['n_truncated_in_use'].sum())} still in use, scored as invalid); re-ask them with "
                 "`hindsight answer --retry-truncated --max-tokens N`." if len(cut) else
                 f"None of {int(truncation['n_answers'].sum())} replies ended on the token limit.")))
    losses = report.rows("report_context_losses")
    warned = losses[losses["loss_warning"].notna()] if not losses.empty else losses
    section.blocks.append(Block(
        "context-losses", "Requests beyond the context window", ["report_context_losses"],
        table=_table(losses) if not losses.empty else None,
        caption=("No request was lost to a model's context window or to a shortened prompt." if losses.empty else
                 f"Requests beyond the model's context window: {int(losses['n_context_overflow'].sum())}; answered to a "
                 f"shortened prompt: {int(losses['n_prompt_truncated'].sum())} (neither is an answer); pairs lost with "
                 f"them: {int(losses['n_pairs_lost'].sum())}. "
                 + (f"Cells whose full and masked sides lost different shares (their surviving pairs are not the pairs "
                    f"of the design): {len(warned)} of {len(losses)}." if len(warned) else "Both sides of every cell lost the same share."))))
    missing = report.rows("report_missing_pairs")
    incomplete = missing[missing["n_paired"] < missing["n_expected"]]
    expected, paired = int(missing["n_expected"].sum()), int(missing["n_paired"].sum())
    section.blocks.append(Block(
        "missing-pairs", "Missing full/masked pairs", ["report_missing_pairs"],
        table=_table(incomplete) if not incomplete.empty else None,
        caption=("No answers stored yet." if missing.empty else
                 f"{expected - paired} of {expected} expected pairs are missing, in {len(incomplete)} of "
                 f"{len(missing)} cohort x model x prompt x condition cells (listed)." if len(incomplete) else
                 f"All {expected} expected pairs of {len(missing)} cells have both answers.")))
    return section


def validation_section(report: Report) -> Section:
    section = Section("human-validation", "Human validation",
                      "Paper §3.8 and Appendix G: clinicians assess the questions, reference answers and hindsight "
                      "traps of an error-enriched sample of cases (weights exp(EPS / tau) from one model's errors). "
                      "Sample agreement counts individual assessments (na excluded); the design-weighted (IPW) "
                      "estimate weights each by 1 / its case's inclusion probability; inter-annotator agreement and "
                      "Cohen's kappa compare the two annotators of a half. Intervals: case-clustered bootstrap.")
    table = report.rows("report_validation")
    design = report.rows("report_validation_design")
    if table.empty:
        caption = ("No validation design yet: `hindsight validation sample --model …`, `validation export`, "
                   "`validation load`, then `hindsight build`." if design.empty else
                   "A design is drawn; no assessment is loaded yet (`hindsight validation load FILE.csv`).")
        section.blocks.append(Block("validation-table", "Table G.1: agreement with the benchmark's annotations",
                                    ["report_validation"], caption=caption))
    else:
        newest = table[table["design_id"] == table["design_id"].iloc[-1]]
        shown = newest[newest["cohort"] == "all"].assign(
            item=lambda f: f["item"] + f["judge_model"].map(lambda j: f" ({j})" if j else ""),
            value=lambda f: [f"{_fmt(e)} [{_fmt(lo)}, {_fmt(hi)}]" for e, lo, hi in zip(f["estimate"], f["ci_low"], f["ci_high"])])
        wide = shown.pivot_table(index="item", columns="statistic", values="value", aggfunc="first").reset_index()
        counts = shown.groupby("item")[["n_questions", "n_cases", "n_assessments"]].max().reset_index()
        section.blocks.append(Block(
            "validation-table", "Table G.1: agreement with the benchmark's annotations", ["report_validation"],
            table=_table(wide.merge(counts, on="item")),
            caption=f"Design {newest['design_id'].iloc[0]}, every cohort together (agg_validation has each cohort); "
                    "estimate [95% case-clustered bootstrap interval]."))
    section.blocks.append(Block(
        "validation-design", "The error-enriched sample", ["report_validation_design"],
        table=_table(design) if not design.empty else None,
        caption="Cases per cohort, drawn per half, mean EPS of the drawn and the other cases, and the range of the "
                "inclusion probabilities (simulated; largest Monte Carlo standard error shown)." if not design.empty
        else "No validation design yet."))
    return section


def clinical_sections(report: Report) -> list[Section]:
    metrics = report.rows("report_metrics")
    standard = metrics[metrics["prompt_variant"] == "standard"]
    return [overview_section(report), per_model_section(report, standard), cross_model_section(report, standard),
            prompt_variant_section(report, metrics), cutoff_section(report), breakdown_section(report),
            quality_section(report), validation_section(report)]


def _leaderboard_table(board: pd.DataFrame) -> str:
    """The leaderboard's own cells (ingest/publish/leaderboard.py), with the report's extra columns."""
    rows = board.astype(object).where(board.notna(), None).to_dict("records")
    return pd.DataFrame([leaderboard.cells(row) for row in rows]).to_html(
        index=False, border=0, classes="numbers leaderboard", escape=True)


ROBUSTNESS_CAPTION = (
    "Ranges over the window perturbations (leave one event block out, other calm years, balanced calm, the "
    "drop-one-crisis-date jackknife); flips = perturbations that change the sign (jackknife in brackets), lost sig. = "
    "leave-one-event-out CIs that no longer exclude zero; cutoff Δθ = "
    "largest move across θ ∈ {0.05, 0.1, 0.2}, re-probes = at other temperatures and samples; jackknife = the "
    "cutoff's span over rep subsets and how often it agrees; W/M = transcript audit. A row that fails a check is "
    "marked ⚠ (rules: agg_hb_robustness); its numbers stay in the leaderboard.")


def _pp(value) -> str:
    return "—" if value is None or pd.isna(value) else f"{value * 100:+.1f}"


def _robustness_table(rows: pd.DataFrame) -> str:
    """One line per audit row: what each robustness check found (agg_hb_robustness), failures marked."""
    def rate(value):
        return "—" if value is None or pd.isna(value) else f"{value:.1%}"

    def count(value):
        return "—" if value is None or pd.isna(value) else str(int(value))

    lines = []
    for row in rows.astype(object).where(rows.notna(), None).to_dict("records"):
        lines.append({
            "model": row["display"],
            "E2 [range]": f"{_pp(row['e2_est'])} [{_pp(row['e2_min'])}, {_pp(row['e2_max'])}]",
            "E2 flips (jk) / lost sig.": f"{count(row['e2_sign_flips'])} ({count(row['e2_jackknife_sign_flips'])}) / "
                                          f"{count(row['e2_significance_lost'])}",
            "E3 [range]": f"{_pp(row['e3_est'])} [{_pp(row['e3_min'])}, {_pp(row['e3_max'])}]",
            "E3 flips (jk) / lost sig.": f"{count(row['e3_sign_flips'])} ({count(row['e3_jackknife_sign_flips'])}) / "
                                          f"{count(row['e3_significance_lost'])}",
            "cutoff": row["cutoff_month"] or "—",
            "cutoff Δθ / re-probes": f"{count(row['cutoff_theta_displacement_max'])} / {count(row['cutoff_reprobe_displacement_max'])} mo",
            "jackknife": (f"{row['jk_cutoff_min']}…{row['jk_cutoff_max']}, {row['jk_agree_pct']:.0f}% agree"
                          if row["jk_cutoff_min"] else "—"),
            "W fake / true year": f"{rate(row['w_fake_year_rate'])} / {rate(row['w_true_year_rate'])}",
            "W anachronism": rate(row["w_anachronism_rate"]),
            "M dated strings": rate(row["m_monthyear_rate"]),
            "serving": row["serving_verdict"] or "—",
            "checks": f"⚠ {row['failed_checks']}" if row["failed_checks"] else "pass",
        })
    return pd.DataFrame(lines).to_html(index=False, border=0, classes="numbers robustness", escape=True)


def hindsightbench_section(report: Report) -> Section:
    section = Section("hindsightbench", "HindsightBench audit",
                      "Per-model audit rows (E1–E3 with stratified bootstrap CIs, placebo, date recovery, outcome "
                      "recall, effective cutoff, δ) and the monthly outcome-recall (LAP) series.")
    board = report.rows("report_hb_leaderboard")
    if board.empty:
        section.empty = "No HindsightBench release loaded: `hindsight load hindsightbench ROOT`, then `hindsight build`."
        return section
    section.blocks.append(Block("hb-leaderboard", "Leaderboard", ["report_hb_leaderboard"],
                                table=_leaderboard_table(board),
                                caption=leaderboard.FOOTNOTE + ". Sorted by E2."))
    robust = report.rows("report_hb_robustness")
    if not robust.empty:
        section.blocks.append(Block("hb-robustness", "Robustness of each row", ["report_hb_robustness"],
                                    table=_robustness_table(robust), caption=ROBUSTNESS_CAPTION))
    section.blocks.append(report.figure("hb-effects", "E1, E2 and E3 per model", ["report_hb_leaderboard"],
                                        partial(matplotlib_figure, "hb_effects", board), "E1, E2, E3 per model with 95% CIs"))
    months = report.rows("report_hb_lap_months")
    if not months.empty:
        section.blocks.append(report.figure(
            "hb-lap-heatmap", "Figure 3 (audit) — monthly LAP and effective cutoffs", ["report_hb_lap_months"],
            partial(matplotlib_figure, "lap_heatmap", months), "Heat map of monthly LAP per model with the effective cutoff marked"))
    return section


def provenance(report: Report, db: Path) -> dict:
    rows = report.rows("report_provenance")
    first = rows.iloc[0] if len(rows) else None
    answers = rows.dropna(subset=["model"]) if len(rows) else rows
    return {
        "warehouse": str(db), "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "built_at": _fmt(first["built_at"]) if first is not None else "—",
        "dbt_version": _fmt(first["dbt_version"]) if first is not None else "—",
        "invocation": _fmt(first["dbt_invocation_id"]) if first is not None else "—",
        "replicates": _fmt(first["bootstrap_replicates"]) if first is not None else "—",
        "seed": _fmt(first["bootstrap_seed"]) if first is not None else "—",
        "ci_method": _fmt(first["ci_method"]) if first is not None else "—",
        "hb_draws": _fmt(first["hb_bootstrap_draws"]) if first is not None else "—",
        "reference_source": _fmt(first["reference_source"]) if first is not None else "—",
        "parser": _fmt(first["build_answer_parser_version"]) if first is not None else "—",
        "built_by": _fmt(first["warehouse_version"]) if first is not None else "—",
        "written_by": __version__,
        "table": _table(answers.drop(columns=[c for c in rows.columns if c in {
            "built_at", "dbt_version", "dbt_invocation_id", "reference_source", "bootstrap_replicates",
            "bootstrap_seed", "ci_method", "hb_bootstrap_draws", "build_answer_parser_version", "warehouse_version"}])) if len(answers) else None,
    }


def _figure_pool() -> ThreadPoolExecutor:
    """The figures are drawn by one thread beside the queries (DuckDB releases the GIL while it runs
    them). One: matplotlib's pyplot is not thread-safe, and the interval grids, most of the figures,
    take milliseconds as SVG text. (Worker processes paid more to start, import matplotlib and take
    each figure's rows than the figures then cost: 6.1 s for a 100x report, 4 s with this thread.)"""
    return ThreadPoolExecutor(1, thread_name_prefix="figures")


def write_report(db: Path, out: Path, live: bool = False) -> Path:
    """Render the report of the warehouse `db` into `out`, from its published marts (with LIVE, from the
    warehouse itself); returns the path of index.html."""
    if not Path(db).exists():
        raise InputError(db, "warehouse file not found", "run `hindsight demo` or load data and `hindsight build`")
    with _figure_pool() as pool:
        con = open_marts(Path(db), live)
        try:
            present = {r[0] for r in con.execute(
                "select table_name from information_schema.tables where table_schema = 'main'").fetchall()}
            missing = sorted(set(public_marts()) - present)
            if missing:
                raise InputError(db, f"marts not built: {', '.join(missing)}", "run `hindsight build` first")
            out = Path(out)
            figures_dir = out / "figures"
            figures_dir.mkdir(parents=True, exist_ok=True)
            for stale in figures_dir.glob("*.svg"):     # an earlier report's figures, and nothing else of the folder
                if FIGURE_FILE.match(stale.name):
                    stale.unlink()
            report = Report(con, out, pool)
            sections = clinical_sections(report) + [hindsightbench_section(report)]
            footer = provenance(report, Path(db).resolve())
            report.wait()
        finally:
            con.close()
    analyses = sorted({name for s in sections for b in s.blocks for name in b.analyses} | {"report_provenance"})
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    html = environment.from_string(TEMPLATE.read_text()).render(
        sections=sections, footer=footer, analyses=analyses)
    index = out / "index.html"
    partial = out / "index.html.partial"
    partial.write_text(html, encoding="utf-8")
    partial.replace(index)          # a reader never sees half a page
    return index
