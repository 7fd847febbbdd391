"""The report's figures, drawn with matplotlib from the DataFrames of the
`analyses/report_*.sql` queries and written as SVG.

Every estimate is drawn with its 95% case-clustered bootstrap CI, conditions
carry the paper's labels (strict masking conditions starred as in Appendix E),
and series are dodged so that 4+ models and 7 conditions stay apart.
"""
from __future__ import annotations

import textwrap
import weakref
from pathlib import Path

import matplotlib

matplotlib.use("Agg")   # files only: no display on CI machines
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ingest.config import protocol_var  # noqa: E402

plt.rcParams.update({
    "svg.fonttype": "none", "svg.hashsalt": "hindsight-report", "font.size": 9,
    "axes.spines.top": False, "axes.spines.right": False, "axes.titlesize": 10,
    # titles at a fixed height above the panel: matplotlib otherwise measures every axis's ticks to
    # place each title (no panel has ticks on top)
    "axes.titley": 1.0,
})
CONDITIONS = ["0", "1.1", "1.2", "2.1", "2.2", "3.1", "3.2"]
STRICT = {"2.1", "2.2", "3.1", "3.2"}     # the masked input holds no original narrative (paper §3.6)
LABELS = {"acc": "Accuracy (Acc)", "htr": "Hindsight trap rate (HTR)", "delta_acc": "ΔAcc",
          "delta_htr": "ΔHTR", "air": "Answer instability rate (AIR)", "hbr": "Hindsight bias rate (HBR)"}
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22"]
MARKERS = ["o", "s", "D", "^", "v", "P", "X", "<", ">", "h"]


def condition_label(condition: str) -> str:
    return f"{condition}*" if condition in STRICT else condition


# figures _finish laid out in inches: everything is inside the canvas, so saving needs no tight
# bounding box (which draws the figure a second time)
_LAID_OUT: weakref.WeakSet = weakref.WeakSet()


def save(figure, path: Path) -> None:
    tight = None if figure in _LAID_OUT else "tight"
    figure.savefig(path, format="svg", bbox_inches=tight, metadata={"Date": None})
    plt.close(figure)


# the metrics whose 95% CI is read against 0 (dim_metrics): HTR and the paired metrics; † marks them
TESTED_AGAINST_ZERO = {"htr", "delta_acc", "delta_htr", "air", "hbr"}


def _interval_panel(ax, cells: pd.DataFrame, series: list[tuple[str, dict]], conditions: list[str],
                    title: str, zero_line: bool, unit_range: bool, metric: str | None = None) -> None:
    """Points with 95% CI bars per condition, one dodged series per (label, filter). The y-range is the
    panel's own and covers every point and interval (with room for the † marks)."""
    width = 0.8 / max(len(series), 1)
    lows, highs, marked = [], [], False
    for index, (label, where) in enumerate(series):
        rows = cells
        for column, value in where.items():
            rows = rows[rows[column] == value]
        rows = rows.set_index("condition")
        offset = (index - (len(series) - 1) / 2) * width
        x, y, low, high, stars = [], [], [], [], []
        for position, condition in enumerate(conditions):
            if condition not in rows.index or pd.isna(rows.at[condition, "estimate"]):
                continue
            row = rows.loc[condition]
            x.append(position + offset)
            y.append(row["estimate"])
            low.append(row["estimate"] - row["ci_low"] if pd.notna(row["ci_low"]) else 0.0)
            high.append(row["ci_high"] - row["estimate"] if pd.notna(row["ci_high"]) else 0.0)
            stars.append(bool(row.get("significant", False)) and (metric or "") in TESTED_AGAINST_ZERO)
        if not x:
            continue
        low, high = np.maximum(low, 0), np.maximum(high, 0)
        lows.append(np.min(np.asarray(y) - low))
        highs.append(np.max(np.asarray(y) + high))
        color, marker = PALETTE[index % len(PALETTE)], MARKERS[index % len(MARKERS)]
        ax.errorbar(x, y, yerr=[low, high], fmt=marker, color=color, markersize=4, capsize=2, linewidth=1, label=label)
        for px, py, ph, star in zip(x, y, high, stars):
            if star:
                marked = True
                ax.annotate("†", (px, py + ph), ha="center", va="bottom", fontsize=8, color=color)
    ax.set_xticks(range(len(conditions)), [condition_label(c) for c in conditions])
    ax.set_xlim(-0.6, len(conditions) - 0.4)
    ax.ticklabel_format(axis="y", useOffset=False, style="plain")
    if zero_line:
        ax.axhline(0, color="#999999", linewidth=0.7, zorder=0)
    # an all-zero paired panel reads as zero, not as 1e-17 noise; a share panel spans at least [0, 1]
    floor, ceiling = (-0.05, 1.05) if unit_range else (-0.1, 0.1)
    bottom, top = min([floor, *lows]), max([ceiling, *highs])
    pad = 0.06 * (top - bottom)
    if bottom < floor:
        bottom -= pad
    if top > ceiling or marked:
        top += pad * (2.5 if marked else 1)        # room for the † above the highest bar
    ax.set_ylim(bottom, top)
    # wrapped to the panel's width, so a long model name does not run into the next panel's title
    ax.set_title(textwrap.fill(title, max(12, int(ax.get_position().width * ax.figure.get_figwidth() / TITLE_CHAR))))
    ax.grid(axis="y", color="#eeeeee", linewidth=0.6)


# the grid figures' margins in inches (font size 9, titles 10): room for the y unit and tick labels
# on the left, the x ticks and label below a panel and the next row's title above it, the suptitle;
# fixed, rather than measured by tight_layout, which draws every text of the figure to find them
LEFT, RIGHT, TOP, BOTTOM, WSPACE, HSPACE = 0.85, 0.15, 0.6, 0.6, 0.7, 0.95
# average widths of a 9 pt, a 10 pt and a 7 pt character; the heights of a 10 pt and a 7 pt line
CHAR, TITLE_CHAR, NOTE_CHAR, TITLE_LINE, NOTE_LINE = 0.075, 0.085, 0.058, 0.17, 0.13


def _grid(rows: int, columns: int, width: float = 3.6, height: float = 2.6):
    """Panels of width x height inches; _finish adds the legend and the note around them."""
    # no shared y: each panel sets a range that covers its own points and intervals
    figure, axes = plt.subplots(rows, columns, squeeze=False,
                                figsize=(LEFT + columns * width + (columns - 1) * WSPACE + RIGHT,
                                         TOP + rows * height + (rows - 1) * HSPACE + BOTTOM))
    return figure, axes


def _finish(figure, axes, title: str, note: str) -> None:
    """Shared legend on the right, title above and note below, none over a panel: the panels keep their
    size in inches and the canvas grows by the legend's width and the note's lines; the unit on the
    first panel of each row."""
    rows, columns = axes.shape
    width, height = figure.get_size_inches()
    panel_width = (width - LEFT - RIGHT - (columns - 1) * WSPACE) / columns
    panel_height = (height - TOP - BOTTOM - (rows - 1) * HSPACE) / rows
    extra = TITLE_LINE * max(ax.get_title().count("\n") for ax in axes.flat)     # wrapped panel titles
    top, hspace = TOP + extra, HSPACE + extra
    height += extra * rows
    for ax in axes[:, 0]:
        paired = any(marker in ax.get_title() for marker in ("Δ", "instability", "bias rate"))
        ax.set_ylabel("share of question pairs" if paired else "share of questions")
    handles, labels = [], []
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    legend = (0.6 + CHAR * max(map(len, labels))) if labels else 0.0
    width += legend
    note = textwrap.fill(note, max(40, int((width - 0.2) / NOTE_CHAR)))
    bottom = BOTTOM + NOTE_LINE * (note.count("\n") + 1)
    height += bottom - BOTTOM
    figure.set_size_inches(width, height)
    figure.subplots_adjust(left=LEFT / width, right=(width - legend - RIGHT) / width,
                           bottom=bottom / height, top=1 - top / height,
                           wspace=WSPACE / panel_width, hspace=hspace / panel_height)
    if handles:
        figure.legend(handles, labels, loc="center left", frameon=False,
                      bbox_to_anchor=((width - legend) / width, 0.5))
    figure.text(0.1 / width, 0.08 / height, note, fontsize=7, color="#555555", ha="left", va="bottom")
    figure.suptitle(title, fontsize=11, y=1 - 0.12 / height, va="top")
    _LAID_OUT.add(figure)


NOTE = ("Points: estimates; bars: 95% case-clustered bootstrap CIs. * strict masking condition (2.x, 3.x). "
        "† the CI excludes 0 (HTR and the paired metrics).")


def individual_metrics(cells: pd.DataFrame, cohorts: list[str], title: str,
                       series: list[tuple[str, dict]]) -> plt.Figure:
    """Figure 3 / F.1: Acc and HTR per condition, full vs masked (and per prompt variant)."""
    figure, axes = _grid(len(cohorts), 2)
    for row, cohort in enumerate(cohorts):
        mine = cells[cells["cohort"] == cohort]
        for column, metric in enumerate(["acc", "htr"]):
            _interval_panel(axes[row, column], mine[mine["metric"] == metric], series, CONDITIONS,
                            f"{cohort} - {LABELS[metric]}", zero_line=False, unit_range=True, metric=metric)
            axes[row, column].set_xlabel("input condition")
    _finish(figure, axes, title, "Points: estimates; bars: 95% case-clustered bootstrap CIs. * strict masking "
                          "condition (2.x, 3.x); condition 0 is unpaired (full information only). "
                          "† the CI of HTR excludes 0.")
    return figure


def paired_metrics(cells: pd.DataFrame, cohorts: list[str], title: str,
                   series: list[tuple[str, dict]]) -> plt.Figure:
    """Figure 4 / F.2: ΔAcc, ΔHTR, AIR and HBR per paired condition."""
    figure, axes = _grid(len(cohorts), 4)
    for row, cohort in enumerate(cohorts):
        mine = cells[(cells["cohort"] == cohort) & (cells["visibility"] == "paired")]
        for column, metric in enumerate(["delta_acc", "delta_htr", "air", "hbr"]):
            _interval_panel(axes[row, column], mine[mine["metric"] == metric], series, CONDITIONS[1:],
                            f"{cohort} - {LABELS[metric]}", zero_line=True, unit_range=False, metric=metric)
            axes[row, column].set_xlabel("paired condition")
    _finish(figure, axes, title, NOTE)
    return figure


def cross_model(cells: pd.DataFrame, cohorts: list[str], models: list[str], metric_rows: list[tuple[str, str]],
                title: str) -> plt.Figure:
    """Figures E.7-E.9: one panel per (metric, visibility) row and cohort column, models dodged."""
    figure, axes = _grid(len(metric_rows), len(cohorts), width=max(3.6, 0.55 * len(models) + 3.0))
    for row, (metric, visibility) in enumerate(metric_rows):
        for column, cohort in enumerate(cohorts):
            mine = cells[(cells["cohort"] == cohort) & (cells["metric"] == metric)
                         & (cells["visibility"] == visibility)]
            conditions = CONDITIONS[1:] if visibility != "full" else CONDITIONS
            paired = visibility == "paired"
            _interval_panel(axes[row, column], mine, [(m, {"model": m}) for m in models], conditions,
                            f"{cohort} - {LABELS[metric]}" + ("" if paired else f", {visibility}"),
                            zero_line=paired, unit_range=not paired, metric=metric)
    _finish(figure, axes, title, NOTE)
    return figure


def sliced(cells: pd.DataFrame, models: list[str], metric_columns: list[tuple[str, str]], title: str) -> plt.Figure:
    """Per-format / per-eval-target breakdown of one cohort: models in rows, metrics in columns, slices dodged."""
    slices = sorted(cells["slice"].dropna().unique())
    figure, axes = _grid(len(models), len(metric_columns), width=max(3.6, 0.4 * len(slices) + 3.2))
    for row, model in enumerate(models):
        for column, (metric, visibility) in enumerate(metric_columns):
            mine = cells[(cells["model"] == model) & (cells["metric"] == metric) & (cells["visibility"] == visibility)]
            paired = visibility == "paired"
            _interval_panel(axes[row, column], mine, [(s, {"slice": s}) for s in slices],
                            CONDITIONS[1:] if paired or visibility == "masked" else CONDITIONS,
                            f"{model} - {LABELS[metric]}" + ("" if paired else f", {visibility}"),
                            zero_line=paired, unit_range=not paired, metric=metric)
    _finish(figure, axes, title, NOTE)
    return figure


def relpos_ecdf(positions: pd.DataFrame) -> plt.Figure:
    """Figure D.1: empirical CDF of RelPos(q) per cohort."""
    figure, ax = plt.subplots(figsize=(5.2, 3.4))
    for index, (cohort, rows) in enumerate(positions.groupby("cohort", sort=True)):
        values = np.sort(rows["relpos"].to_numpy(dtype=float))
        ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post",
                color=PALETTE[index % len(PALETTE)], label=f"{cohort} (n = {len(values)})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("relative cutoff position RelPos(q) (0 = first event, 1 = last)")
    ax.set_ylabel("cumulative share of questions")
    ax.grid(color="#eeeeee", linewidth=0.6)
    ax.legend(frameon=False, loc="upper left")
    figure.tight_layout()
    return figure


def quarantine_bars(quality: pd.DataFrame) -> plt.Figure:
    """Quarantined TTS lines per cohort/source, stacked by reason."""
    quality = quality.assign(group=quality["cohort"] + " / " + quality["source"])
    table = quality.pivot_table(index="group", columns="reason", values="n_lines", aggfunc="sum", fill_value=0)
    figure, ax = plt.subplots(figsize=(7.5, 0.45 * len(table) + 1.6))
    left = np.zeros(len(table))
    for index, reason in enumerate(table.columns):
        ax.barh(table.index, table[reason], left=left, color=PALETTE[index % len(PALETTE)], label=reason,
                hatch="//" if index >= len(PALETTE) else None)
        left += table[reason].to_numpy()
    ax.set_xlabel("quarantined TTS lines (left out of masking and metrics)")
    ax.invert_yaxis()
    ax.legend(frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5), title="reason")
    figure.tight_layout()
    return figure


def invalid_answer_bars(invalid: pd.DataFrame) -> plt.Figure:
    """Share of answers that did not parse, per cohort/model and format."""
    invalid = invalid.assign(group=invalid["cohort"] + " / " + invalid["model"])
    table = invalid.pivot_table(index="group", columns="format", values="invalid_share", aggfunc="sum")
    figure, ax = plt.subplots(figsize=(7.5, 0.5 * len(table) + 1.6))
    height = 0.8 / max(len(table.columns), 1)
    for index, fmt in enumerate(table.columns):
        positions = np.arange(len(table)) + (index - (len(table.columns) - 1) / 2) * height
        ax.barh(positions, table[fmt].fillna(0), height=height, color=PALETTE[index % len(PALETTE)], label=fmt)
    ax.set_yticks(np.arange(len(table)), table.index)
    ax.set_xlabel("share of newest answers per cell that did not parse (invalid)")
    ax.set_xlim(0, max(0.05, float(np.nanmax(table.to_numpy())) * 1.15 if table.size else 0.05))
    ax.invert_yaxis()
    ax.legend(frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5), title="format")
    figure.tight_layout()
    return figure


def lap_heatmap(months: pd.DataFrame) -> plt.Figure:
    """Audit Figure 3: monthly LAP per model, rows ordered by effective cutoff, the cutoff ticked in red."""
    order = (months.drop_duplicates("model_key")
             .assign(undefined=lambda f: f["lap_at_chance"] | f["empirical_cutoff"].isna())
             .sort_values(["undefined", "empirical_cutoff", "model_key"], na_position="first"))
    columns = sorted(months["decision_month"].unique())
    grid = months.pivot_table(index="model_key", columns="decision_month", values="lap").reindex(
        index=order["model_key"], columns=columns)
    figure, ax = plt.subplots(figsize=(max(6.0, 0.04 * len(columns) + 3.5), 0.38 * len(order) + 1.8))
    image = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", cmap="Blues", vmin=0, vmax=1,
                      interpolation="nearest")
    labels = [f"{row.display}" + (" (at chance: cutoff undefined)" if row.undefined else "")
              for row in order.itertuples()]
    ax.set_yticks(range(len(order)), labels)
    step = max(1, len(columns) // 12)
    ax.set_xticks(range(0, len(columns), step), columns[::step], rotation=60, ha="right")
    for y, row in enumerate(order.itertuples()):
        if not row.undefined and row.empirical_cutoff in columns:
            x = columns.index(row.empirical_cutoff)
            ax.plot([x + 0.5, x + 0.5], [y - 0.45, y + 0.45], color="#d62728", linewidth=2.2)
    ax.set_xlabel("probed month (decision date)")
    colorbar = figure.colorbar(image, ax=ax, fraction=0.03, pad=0.02)
    colorbar.set_label("LAP: share of recalled outcome directions")
    figure.text(0.0, -0.02, f"Red tick: behaviourally effective cutoff (last month with LAP > {protocol_var('hb_lap_threshold')}). "
                "Rows ordered by cutoff; models whose recall is at chance have no cutoff.",
                fontsize=7, color="#555555", ha="left", va="top")
    figure.tight_layout()
    return figure


def hb_effects(board: pd.DataFrame) -> plt.Figure:
    """E1, E2, E3 (gaps in bearish share, crisis minus calm) per model with their bootstrap CIs."""
    metrics = [("e1", "E1 revealed vs date-only (R − D)"), ("e2", "E2 date trigger (D − M)"),
               ("e3", "E3 transplant (W fake − true)")]
    figure, axes = plt.subplots(1, 3, figsize=(10.5, 0.32 * len(board) + 1.8), sharey=True, squeeze=False)
    names = board["display"].tolist()
    for ax, (key, label) in zip(axes[0], metrics):
        y = np.arange(len(board))
        est, low, high = (board[f"{key}_{s}"].astype(float).to_numpy() for s in ("est", "lo", "hi"))
        shown = np.isfinite(est)
        ax.errorbar(est[shown], y[shown], xerr=[np.maximum(est - low, 0)[shown], np.maximum(high - est, 0)[shown]],
                    fmt="o", color=PALETTE[0], markersize=4, capsize=2, linewidth=1)
        ax.axvline(0, color="#999999", linewidth=0.7)
        ax.set_title(label)
        ax.set_yticks(y, names)
        ax.grid(axis="x", color="#eeeeee", linewidth=0.6)
    axes[0, 0].invert_yaxis()
    figure.text(0.0, -0.02, "Bearish-share effects with 95% stratified bootstrap CIs (agg_hb_audit_rows); "
                "models without an estimate are gated or unidentified (see the table).",
                fontsize=7, color="#555555", ha="left", va="top")
    figure.tight_layout()
    return figure
