"""The report's interval figures (Figures 3 and 4, E.7-E.9, F.1-F.2 and the breakdowns by format
and evaluation target) written as SVG elements directly: a grid of panels of points with 95% CI
bars per condition, dodged series, a shared legend, a title and a note.

These are most of a report's figures (27 of 32 at 100x the paper's cases) and nothing but marks,
rules and text, so they skip matplotlib: its artists, tick machinery and SVG backend took 0.2-0.7 s
a figure (21 CPU-seconds a report), this takes milliseconds. The layout is computed in points from
the same margins the matplotlib grids used; text extents are estimated from the font size (a
generous 0.6 em a character), and the browser test measures the rendered text against them.
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

import numpy as np
import pandas as pd

from ingest.publish.palette import CONDITIONS, LABELS, MARKERS, PALETTE, TESTED_AGAINST_ZERO, condition_label
from ingest.stats.trust import is_true

MARK_TEXT = "†"          # the CI excludes 0
FEW_MARK = "‡"           # it does, over too few cases for the CI to cover 95% (agg_metrics.few_cases)

PT = 72.0                       # points an inch: the SVG's user unit
# margins in inches (font size 9, titles 10): room for the y unit and tick labels on the left, the x
# ticks and label below a panel and the next row's title above it, the suptitle
LEFT, RIGHT, TOP, BOTTOM, WSPACE, HSPACE = 0.85, 0.15, 0.6, 0.6, 0.7, 0.95
EM = 0.6                        # estimated width of a character, in ems (DejaVu Sans averages 0.55)
TICK, TITLE, SUPTITLE, NOTE_SIZE, MARK = 8.0, 10.0, 11.0, 7.0, 8.0      # font sizes in points
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"


@dataclass(frozen=True)
class Box:
    """A rectangle in points, y downwards."""
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def within(self, other: Box) -> bool:
        return other.x0 <= self.x0 and self.x1 <= other.x1 and other.y0 <= self.y0 and self.y1 <= other.y1


def text_box(x: float, y: float, text: str, size: float, anchor: str = "start") -> Box:
    """The estimated extent of one line of text whose baseline starts (start), centres (middle) or ends
    (end) at x, y."""
    width = EM * size * len(text)
    x0 = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return Box(x0, y - 0.8 * size, x0 + width, y + 0.25 * size)


@dataclass
class Panel:
    title: str
    box: Box                                   # the plotting area
    ylim: tuple[float, float]
    marks: list[str] = field(default_factory=list)          # the † (and ‡) drawn, in order
    texts: list[Box] = field(default_factory=list)          # its title, ticks and labels


@dataclass
class IntervalFigure:
    width: float                                # points
    height: float
    panels: list[Panel] = field(default_factory=list)
    texts: list[Box] = field(default_factory=list)          # suptitle, note, legend
    elements: list[str] = field(default_factory=list)

    @property
    def canvas(self) -> Box:
        return Box(0.0, 0.0, self.width, self.height)

    def text(self, x: float, y: float, value: str, size: float, anchor: str = "start", color: str = "#000000",
             extra: str = "") -> Box:
        self.elements.append(f'<text x="{x:.2f}" y="{y:.2f}" font-size="{size:g}" text-anchor="{anchor}" '
                             f'fill="{color}"{extra}>{escape(value)}</text>')
        return text_box(x, y, value, size, anchor)

    def line(self, x0: float, y0: float, x1: float, y1: float, color: str, width: float = 1.0) -> None:
        self.elements.append(f'<line x1="{x0:.2f}" y1="{y0:.2f}" x2="{x1:.2f}" y2="{y1:.2f}" '
                             f'stroke="{color}" stroke-width="{width:g}"/>')

    def svg(self) -> str:
        return ('<?xml version="1.0" encoding="utf-8" standalone="no"?>\n'
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width:.1f}pt" height="{self.height:.1f}pt" '
                f'viewBox="0 0 {self.width:.2f} {self.height:.2f}" font-family="{FONT}">\n'
                f'<rect width="100%" height="100%" fill="#ffffff"/>\n' + "\n".join(self.elements) + "\n</svg>\n")


def marker(shape: str, x: float, y: float, color: str, size: float = 4.0) -> str:
    """A filled marker of matplotlib's shape code (markersize 4: about 4 points across)."""
    r = size / 2
    if shape == "o":
        return f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{r:.2f}" fill="{color}"/>'
    outlines = {
        "s": [(-1, -1), (1, -1), (1, 1), (-1, 1)],
        "D": [(0, -1.3), (1.3, 0), (0, 1.3), (-1.3, 0)],
        "^": [(0, -1.3), (1.2, 1), (-1.2, 1)],
        "v": [(0, 1.3), (1.2, -1), (-1.2, -1)],
        "<": [(-1.3, 0), (1, -1.2), (1, 1.2)],
        ">": [(1.3, 0), (-1, -1.2), (-1, 1.2)],
        "P": [(-0.4, -1.2), (0.4, -1.2), (0.4, -0.4), (1.2, -0.4), (1.2, 0.4), (0.4, 0.4), (0.4, 1.2), (-0.4, 1.2),
              (-0.4, 0.4), (-1.2, 0.4), (-1.2, -0.4), (-0.4, -0.4)],
        "X": [(-1.2, -0.7), (-0.7, -1.2), (0, -0.5), (0.7, -1.2), (1.2, -0.7), (0.5, 0), (1.2, 0.7), (0.7, 1.2),
              (0, 0.5), (-0.7, 1.2), (-1.2, 0.7), (-0.5, 0)],
        "h": [(math.cos(a) * 1.2, math.sin(a) * 1.2) for a in np.linspace(-math.pi / 2, 3 * math.pi / 2, 7)[:-1]],
    }
    points = " ".join(f"{x + dx * r:.2f},{y + dy * r:.2f}" for dx, dy in outlines[shape])
    return f'<polygon points="{points}" fill="{color}"/>'


def series_style(index: int) -> tuple[str, str]:
    """The colour and marker of the INDEXth series, in a panel and in the legend alike."""
    return PALETTE[index % len(PALETTE)], MARKERS[index % len(MARKERS)]


def nice_ticks(bottom: float, top: float, target: int = 5) -> tuple[list[float], int]:
    """Round tick values within [bottom, top] about `target` steps apart, and the decimals they need."""
    raw = (top - bottom) / target
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * 0.999)
    first = math.ceil(bottom / step - 1e-9)
    ticks = [round(k * step, 12) for k in range(first, math.floor(top / step + 1e-9) + 1)]
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) + (1 if round(step / magnitude, 6) == 2.5 else 0)
    return ticks, decimals


def tick_label(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "\u2212")


def y_range(lows: list[float], highs: list[float], paired: bool, marked: bool) -> tuple[float, float]:
    """The panel's own y-range: every interval (each holds its point), [0, 1] at least for shares and
    [-0.1, 0.1] for the paired metrics (an all-zero panel reads as zero, not as 1e-17 noise), room
    above for the †."""
    floor, ceiling = (-0.1, 0.1) if paired else (-0.05, 1.05)
    bottom, top = min([floor, *lows]), max([ceiling, *highs])
    pad = 0.06 * (top - bottom)
    if bottom < floor:
        bottom -= pad
    if top > ceiling or marked:
        top += pad * (2.5 if marked else 1)
    return bottom, top


def interval_panel(figure: IntervalFigure, box: Box, cells: pd.DataFrame, series: list[tuple[str, dict]],
                   conditions: list[str], title: str, paired: bool, metric: str | None,
                   xlabel: str | None, ylabel: str | None) -> Panel:
    """Points with 95% CI bars per condition, one dodged series per (label, filter); a paired metric's
    panel has a zero line and the unit of question pairs."""
    width = 0.8 / max(len(series), 1)
    drawn = []            # (series index, x, estimate, low, high, starred)
    by_condition = {c: i for i, c in enumerate(conditions)}
    for index, (_, where) in enumerate(series):
        rows = cells
        for column, value in where.items():
            rows = rows[rows[column] == value]
        offset = (index - (len(series) - 1) / 2) * width
        for row in rows.itertuples(index=False):
            if row.condition not in by_condition or pd.isna(row.estimate):
                continue
            low = row.ci_low if pd.notna(row.ci_low) else row.estimate
            high = row.ci_high if pd.notna(row.ci_high) else row.estimate
            starred = bool(getattr(row, "significant", False)) and (metric or "") in TESTED_AGAINST_ZERO
            # significant over too few cases for the interval to cover 95%: never the bare †
            starred = (FEW_MARK if is_true(getattr(row, "few_cases", False)) else MARK_TEXT) if starred else ""
            drawn.append((index, by_condition[row.condition] + offset, float(row.estimate),
                          min(float(low), row.estimate), max(float(high), row.estimate), starred))
    drawn.sort(key=lambda d: (d[0], d[1]))
    bottom, top = y_range([d[3] for d in drawn], [d[4] for d in drawn], paired, any(d[5] for d in drawn))
    panel = Panel(title, box, (bottom, top))

    def px(x: float) -> float:
        return box.x0 + (x + 0.6) / len(conditions) * (box.x1 - box.x0)

    def py(y: float) -> float:
        return box.y1 - (y - bottom) / (top - bottom) * (box.y1 - box.y0)

    figure.elements.append("<g class=\"panel\">")
    ticks, decimals = nice_ticks(bottom, top)
    for tick in ticks:
        figure.line(box.x0, py(tick), box.x1, py(tick), "#eeeeee", 0.6)
        panel.texts.append(figure.text(box.x0 - 5, py(tick) + TICK * 0.35, tick_label(tick, decimals), TICK, "end"))
        figure.line(box.x0 - 3, py(tick), box.x0, py(tick), "#000000", 0.8)
    if paired:
        figure.line(box.x0, py(0), box.x1, py(0), "#999999", 0.7)
    for position, condition in enumerate(conditions):
        figure.line(px(position), box.y1, px(position), box.y1 + 3, "#000000", 0.8)
        panel.texts.append(figure.text(px(position), box.y1 + 4 + TICK, condition_label(condition), TICK, "middle"))
    figure.line(box.x0, box.y0, box.x0, box.y1, "#000000", 0.8)
    figure.line(box.x0, box.y1, box.x1, box.y1, "#000000", 0.8)
    for index, x, estimate, low, high, starred in drawn:
        color, shape = series_style(index)
        figure.line(px(x), py(low), px(x), py(high), color)
        for end in (low, high):
            figure.line(px(x) - 2, py(end), px(x) + 2, py(end), color)
        figure.elements.append(marker(shape, px(x), py(estimate), color))
        if starred:
            figure.text(px(x), py(high) - 2, starred, MARK, "middle", color)
            panel.marks.append(starred)
    lines = title.split("\n")
    for number, line in enumerate(reversed(lines)):
        panel.texts.append(figure.text((box.x0 + box.x1) / 2, box.y0 - 6 - number * TITLE * 1.2, line, TITLE, "middle"))
    if xlabel:
        panel.texts.append(figure.text((box.x0 + box.x1) / 2, box.y1 + 8 + 2 * TICK + 2, xlabel, TICK + 1, "middle"))
    if ylabel:
        x, y = box.x0 - 42, (box.y0 + box.y1) / 2
        figure.text(x, y, ylabel, TICK + 1, "middle", extra=f' transform="rotate(-90 {x:.2f} {y:.2f})"')
        half = EM * (TICK + 1) * len(ylabel) / 2
        panel.texts.append(Box(x - 0.8 * (TICK + 1), y - half, x + 0.25 * (TICK + 1), y + half))
    figure.elements.append("</g>")
    return panel


@dataclass
class PanelSpec:
    cells: pd.DataFrame
    series: list[tuple[str, dict]]
    conditions: list[str]
    title: str
    paired: bool                # a paired metric: zero line, the pairs' unit, no [0, 1] floor
    metric: str
    xlabel: str | None = None


def grid(specs: list[list[PanelSpec]], title: str, note: str, width: float = 3.6, height: float = 2.6) -> IntervalFigure:
    """Panels of width x height inches in rows and columns; the legend on the right, the title above
    and the note below, none over a panel; the unit on the first panel of each row."""
    rows, columns = len(specs), len(specs[0])
    wrap = max(12, int(width * PT / (EM * TITLE)))
    titles = [[textwrap.fill(spec.title, wrap) for spec in row] for row in specs]
    extra = max(t.count("\n") for row in titles for t in row) * TITLE * 1.2          # wrapped panel titles
    labels = list(dict.fromkeys(label for row in specs for spec in row for label, _ in spec.series))
    legend = (0.6 * PT + EM * TICK * max(map(len, labels)) + 12) if labels else 0.0
    figure_width = (LEFT + columns * width + (columns - 1) * WSPACE + RIGHT) * PT + legend
    note_lines = textwrap.fill(note, max(40, int((figure_width - 0.2 * PT) / (EM * NOTE_SIZE)))).split("\n")
    top, hspace = TOP * PT + extra, HSPACE * PT + extra
    bottom = BOTTOM * PT + NOTE_SIZE * 1.3 * len(note_lines)
    figure = IntervalFigure(figure_width, top + rows * height * PT + (rows - 1) * hspace + bottom)
    for r, row in enumerate(specs):
        for c, spec in enumerate(row):
            x0 = LEFT * PT + c * (width + WSPACE) * PT
            y0 = top + r * (height * PT + hspace)
            figure.panels.append(interval_panel(
                figure, Box(x0, y0, x0 + width * PT, y0 + height * PT), spec.cells, spec.series, spec.conditions,
                titles[r][c], spec.paired, spec.metric, spec.xlabel,
                ("share of question pairs" if spec.paired else "share of questions") if c == 0 else None))
    figure.texts.append(figure.text(figure_width / 2, 0.12 * PT + SUPTITLE, title, SUPTITLE, "middle"))
    note = [figure.text(0.1 * PT, figure.height - 0.08 * PT - (len(note_lines) - 1 - number) * NOTE_SIZE * 1.3, line,
                        NOTE_SIZE, "start", "#555555") for number, line in enumerate(note_lines)]
    figure.texts.append(Box(note[0].x0, note[0].y0, max(box.x1 for box in note), note[-1].y1))
    if labels:
        x = figure_width - legend + 6
        first = figure.height / 2 - (len(labels) - 1) * 7
        for index, label in enumerate(labels):
            y = first + index * 14
            color, shape = series_style(index)
            figure.line(x, y, x + 16, y, color)
            figure.elements.append(marker(shape, x + 8, y, color))
            figure.text(x + 22, y + TICK * 0.35, label, TICK, "start")
        figure.texts.append(Box(x, first - TICK, x + 22 + EM * TICK * max(map(len, labels)), first + (len(labels) - 1) * 14 + TICK))
    return figure


NOTE = ("Points: estimates; bars: 95% case-clustered bootstrap CIs. * strict masking condition (2.x, 3.x). "
        "† the CI excludes 0 (HTR and the paired metrics); ‡ it does, but over too few cases for the CI to cover 95%.")


def individual_metrics(cells: pd.DataFrame, cohorts: list[str], title: str,
                       series: list[tuple[str, dict]]) -> IntervalFigure:
    """Figure 3 / F.1: Acc and HTR per condition, full vs masked (and per prompt variant)."""
    specs = [[PanelSpec(cells[(cells["cohort"] == cohort) & (cells["metric"] == metric)], series, CONDITIONS,
                        f"{cohort} - {LABELS[metric]}", False, metric, "input condition")
              for metric in ("acc", "htr")] for cohort in cohorts]
    return grid(specs, title, "Points: estimates; bars: 95% case-clustered bootstrap CIs. * strict masking "
                "condition (2.x, 3.x); condition 0 is unpaired (full information only). † the CI of HTR excludes 0; ‡ it does, "
                "but over too few cases for the CI to cover 95%.")


def paired_metrics(cells: pd.DataFrame, cohorts: list[str], title: str,
                   series: list[tuple[str, dict]]) -> IntervalFigure:
    """Figure 4 / F.2: ΔAcc, ΔHTR, AIR and HBR per paired condition."""
    paired = cells[cells["visibility"] == "paired"]
    specs = [[PanelSpec(paired[(paired["cohort"] == cohort) & (paired["metric"] == metric)], series, CONDITIONS[1:],
                        f"{cohort} - {LABELS[metric]}", True, metric, "paired condition")
              for metric in ("delta_acc", "delta_htr", "air", "hbr")] for cohort in cohorts]
    return grid(specs, title, NOTE)


def cross_model(cells: pd.DataFrame, cohorts: list[str], models: list[str], metric_rows: list[tuple[str, str]],
                title: str) -> IntervalFigure:
    """Figures E.7-E.9: one panel per (metric, visibility) row and cohort column, models dodged."""
    specs = []
    for metric, visibility in metric_rows:
        paired = visibility == "paired"
        specs.append([PanelSpec(cells[(cells["cohort"] == cohort) & (cells["metric"] == metric)
                                      & (cells["visibility"] == visibility)],
                                [(m, {"model": m}) for m in models], CONDITIONS if visibility == "full" else CONDITIONS[1:],
                                f"{cohort} - {LABELS[metric]}" + ("" if paired else f", {visibility}"),
                                paired, metric) for cohort in cohorts])
    return grid(specs, title, NOTE, width=max(3.6, 0.55 * len(models) + 3.0))


def sliced(cells: pd.DataFrame, models: list[str], metric_columns: list[tuple[str, str]], title: str) -> IntervalFigure:
    """Per-format / per-eval-target breakdown of one cohort: models in rows, metrics in columns, slices dodged."""
    slices = sorted(cells["slice"].dropna().unique())
    specs = []
    for model in models:
        row = []
        for metric, visibility in metric_columns:
            paired = visibility == "paired"
            row.append(PanelSpec(cells[(cells["model"] == model) & (cells["metric"] == metric)
                                       & (cells["visibility"] == visibility)],
                                 [(s, {"slice": s}) for s in slices],
                                 CONDITIONS[1:] if paired or visibility == "masked" else CONDITIONS,
                                 f"{model} - {LABELS[metric]}" + ("" if paired else f", {visibility}"),
                                 paired, metric))
        specs.append(row)
    return grid(specs, title, NOTE, width=max(3.6, 0.4 * len(slices) + 3.2))
