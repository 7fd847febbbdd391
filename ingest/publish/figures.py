"""The report's figures other than the interval grids (those are interval_figures'): the RelPos
ECDF, the data-quality bars, the audit's LAP heat map and effects, drawn with matplotlib from the
DataFrames of the `analyses/report_*.sql` queries and written as SVG.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")   # files only: no display on CI machines
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ingest.config import protocol_var  # noqa: E402
from ingest.publish.palette import PALETTE  # noqa: E402

plt.rcParams.update({
    "svg.fonttype": "none", "svg.hashsalt": "hindsight-report", "font.size": 9,
    "axes.spines.top": False, "axes.spines.right": False, "axes.titlesize": 10,
})


def save(figure, path: Path) -> None:
    figure.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)


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
