"""The report's interval panels: every point and interval inside its panel, ΔAcc beside ΔHTR, AIR and
HBR, and the † on every metric read against 0 (HTR and the paired metrics), condition 0 included."""
from __future__ import annotations

import pandas as pd

from ingest.publish import figures


def cell(metric, visibility, condition, estimate, low, high, significant):
    return {"cohort": "c", "model": "m", "prompt_variant": "standard", "metric": metric, "visibility": visibility,
            "condition": condition, "estimate": estimate, "ci_low": low, "ci_high": high, "significant": significant}


def covered(ax, cells: pd.DataFrame) -> bool:
    bottom, top = ax.get_ylim()
    return all(bottom <= low and high <= top for low, high in zip(cells["ci_low"], cells["ci_high"]))


def test_paired_panels_cover_their_points_and_intervals_and_show_delta_acc():
    cells = pd.DataFrame([
        cell("delta_acc", "paired", "2.1", -0.02, -0.3, 0.2, False),
        cell("delta_htr", "paired", "2.1", 0.01, -0.02, 0.04, False),     # a narrow panel ...
        cell("air", "paired", "2.1", 0.85, 0.7, 0.98, True),               # ... beside a high one
        cell("hbr", "paired", "2.2", 0.06, 0.01, 0.12, True),
    ])
    figure = figures.paired_metrics(cells, ["c"], "t", [("paired", {"visibility": "paired"})])
    axes = figure.axes[:4]
    titles = [ax.get_title() for ax in axes]
    assert [t.split(" - ")[1] for t in titles] == [figures.LABELS[m] for m in ("delta_acc", "delta_htr", "air", "hbr")]
    for ax, metric in zip(axes, ["delta_acc", "delta_htr", "air", "hbr"]):
        assert covered(ax, cells[cells["metric"] == metric]), metric
        bottom, top = ax.get_ylim()
        assert bottom <= -0.1 and top >= 0.1                     # zero is always in view
    marks = [[t.get_text() for t in ax.texts] for ax in axes]
    assert marks == [[], [], ["†"], ["†"]]
    figures.plt.close(figure)


def test_htr_is_marked_at_condition_0_and_acc_never():
    cells = pd.DataFrame([
        cell("acc", "full", "0", 0.9, 0.8, 0.97, True),
        cell("htr", "full", "0", 0.3, 0.2, 0.4, True),
        cell("htr", "masked", "2.1", 0.1, 0.0, 0.2, False),
    ])
    figure = figures.individual_metrics(cells, ["c"], "t", [("full", {"visibility": "full"}),
                                                            ("masked", {"visibility": "masked"})])
    acc, htr = figure.axes[:2]
    assert [t.get_text() for t in acc.texts] == [] and [t.get_text() for t in htr.texts] == ["†"]
    assert covered(acc, cells[cells["metric"] == "acc"]) and covered(htr, cells[cells["metric"] == "htr"])
    figures.plt.close(figure)


def test_grid_figures_keep_every_text_inside_the_canvas_and_off_the_other_panels():
    """The grid figures are laid out in inches (no tight_layout, no tight bounding box when saved): the
    title, the note, the legend and every panel's title, ticks and labels must still fit apart."""
    cells = pd.DataFrame([cell(metric, "paired", condition, 0.1, -0.4, 0.9, True)
                          for metric in ("delta_acc", "delta_htr", "air", "hbr") for condition in figures.CONDITIONS[1:]])
    cells = pd.concat([cells.assign(cohort=cohort, model=model) for cohort in ("glp1", "sepsis")
                       for model in ("a-model-with-a-rather-long-name", "m2")])
    cells["slice"] = "true/false"
    drawn = [figures.paired_metrics(cells[cells["model"] == "m2"], ["glp1", "sepsis"], "a title", [("paired", {"visibility": "paired"})]),
             figures.cross_model(cells, ["glp1", "sepsis"], ["a-model-with-a-rather-long-name", "m2"],
                                 [("air", "paired"), ("hbr", "paired")], "another title"),
             figures.sliced(cells[cells["cohort"] == "glp1"], ["a-model-with-a-rather-long-name", "m2"],
                            [("air", "paired"), ("hbr", "paired")], "a third title")]
    for figure in drawn:
        renderer = figure.canvas.get_renderer()
        canvas = figure.bbox
        panels = [ax.get_tightbbox(renderer) for ax in figure.axes]
        others = [text.get_window_extent(renderer) for text in figure.texts] + \
                 [legend.get_window_extent(renderer) for legend in figure.legends]
        assert len(others) == 3                     # suptitle, note, legend
        for box in panels + others:
            assert canvas.x0 <= box.x0 and box.x1 <= canvas.x1 and canvas.y0 <= box.y0 and box.y1 <= canvas.y1, box
        for i, box in enumerate(panels):
            assert not any(box.overlaps(other) for other in panels[i + 1:] + others)
        assert not others[0].overlaps(others[1]) and not others[0].overlaps(others[2])
        figures.plt.close(figure)
