"""The report's interval panels: every point and interval inside its panel, ΔAcc beside ΔHTR, AIR and
HBR, the † on every metric read against 0 (HTR and the paired metrics), condition 0 included, and
grids whose texts stay inside the canvas and off each other (estimated here; measured as rendered by
Chromium in test_report_browser)."""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import pandas as pd
import pytest

from ingest.publish import interval_figures as figures
from ingest.publish.palette import CONDITIONS, LABELS

SVG = "{http://www.w3.org/2000/svg}"


def cell(metric, visibility, condition, estimate, low, high, significant):
    return {"cohort": "c", "model": "m", "prompt_variant": "standard", "metric": metric, "visibility": visibility,
            "condition": condition, "estimate": estimate, "ci_low": low, "ci_high": high, "significant": significant}


def covered(panel, cells: pd.DataFrame) -> bool:
    bottom, top = panel.ylim
    return all(bottom <= low and high <= top for low, high in zip(cells["ci_low"], cells["ci_high"]))


def test_paired_panels_cover_their_points_and_intervals_and_show_delta_acc():
    cells = pd.DataFrame([
        cell("delta_acc", "paired", "2.1", -0.02, -0.3, 0.2, False),
        cell("delta_htr", "paired", "2.1", 0.01, -0.02, 0.04, False),     # a narrow panel ...
        cell("air", "paired", "2.1", 0.85, 0.7, 0.98, True),               # ... beside a high one
        cell("hbr", "paired", "2.2", 0.06, 0.01, 0.12, True),
    ])
    figure = figures.paired_metrics(cells, ["c"], "t", [("paired", {"visibility": "paired"})])
    assert [p.title.split(" - ")[1] for p in figure.panels] == [LABELS[m] for m in ("delta_acc", "delta_htr", "air", "hbr")]
    for panel, metric in zip(figure.panels, ["delta_acc", "delta_htr", "air", "hbr"]):
        assert covered(panel, cells[cells["metric"] == metric]), metric
        bottom, top = panel.ylim
        assert bottom <= -0.1 and top >= 0.1                     # zero is always in view
    assert [p.marks for p in figure.panels] == [[], [], ["†"], ["†"]]


def test_htr_is_marked_at_condition_0_and_acc_never():
    cells = pd.DataFrame([
        cell("acc", "full", "0", 0.9, 0.8, 0.97, True),
        cell("htr", "full", "0", 0.3, 0.2, 0.4, True),
        cell("htr", "masked", "2.1", 0.1, 0.0, 0.2, False),
    ])
    figure = figures.individual_metrics(cells, ["c"], "t", [("full", {"visibility": "full"}),
                                                            ("masked", {"visibility": "masked"})])
    acc, htr = figure.panels
    assert acc.marks == [] and htr.marks == ["†"]
    assert covered(acc, cells[cells["metric"] == "acc"]) and covered(htr, cells[cells["metric"] == "htr"])


def grid_figures():
    cells = pd.DataFrame([cell(metric, "paired", condition, 0.1, -0.4, 0.9, True)
                          for metric in ("delta_acc", "delta_htr", "air", "hbr") for condition in CONDITIONS[1:]])
    cells = pd.concat([cells.assign(cohort=cohort, model=model) for cohort in ("glp1", "sepsis")
                       for model in ("a-model-with-a-rather-long-name <&>", "m2")])
    cells["slice"] = "true/false"
    long = "a-model-with-a-rather-long-name <&>"
    return [figures.paired_metrics(cells[cells["model"] == "m2"], ["glp1", "sepsis"], "a title", [("paired", {"visibility": "paired"})]),
            figures.cross_model(cells, ["glp1", "sepsis"], [long, "m2"], [("air", "paired"), ("hbr", "paired")], "another title"),
            figures.sliced(cells[cells["cohort"] == "glp1"], [long, "m2"], [("air", "paired"), ("hbr", "paired")], "a third title")]


def test_grid_figures_keep_every_text_inside_the_canvas_and_off_the_other_panels():
    """Laid out in points from the margins: the title, the note, the legend and every panel's title,
    ticks and labels fit in the canvas and apart."""
    for figure in grid_figures():
        assert len(figure.texts) == 3                     # suptitle, note, legend
        panels = [p.box for p in figure.panels]
        extents = [figures.Box(min(b.x0 for b in p.texts + [p.box]), min(b.y0 for b in p.texts + [p.box]),
                               max(b.x1 for b in p.texts + [p.box]), max(b.y1 for b in p.texts + [p.box]))
                   for p in figure.panels]
        for box in extents + figure.texts:
            assert box.within(figure.canvas), box
        for i, box in enumerate(extents):
            assert not any(box.overlaps(other) for other in extents[i + 1:] + figure.texts)
            assert not any(panels[i].overlaps(other) for other in panels[i + 1:])
        assert not figure.texts[0].overlaps(figure.texts[1]) and not figure.texts[0].overlaps(figure.texts[2])


def test_a_grid_is_well_formed_svg_with_its_texts_escaped(tmp_path):
    figure = grid_figures()[1]
    root = ElementTree.fromstring(figure.svg().split("\n", 1)[1])
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "a-model-with-a-rather-long-name <&>" in texts and "†" in texts
    assert len(root.findall(f"{SVG}g[@class='panel']")) == len(figure.panels) == 4
    assert root.get("viewBox") == f"0 0 {figure.width:.2f} {figure.height:.2f}"


@pytest.mark.parametrize(("bottom", "top", "expected"), [
    (-0.05, 1.05, ["0.00", "0.25", "0.50", "0.75", "1.00"]),
    (-0.1, 0.1, ["\u22120.10", "\u22120.05", "0.00", "0.05", "0.10"]),
    (-0.23, 1.4, ["0.0", "0.5", "1.0"]),
])
def test_y_ticks_are_round_values_inside_the_range(bottom, top, expected):
    ticks, decimals = figures.nice_ticks(bottom, top)
    assert [figures.tick_label(t, decimals) for t in ticks] == expected
    assert all(bottom <= t <= top for t in ticks)


def test_a_significant_cell_over_too_few_cases_is_marked_with_its_flag_never_the_bare_dagger():
    """agg_metrics.few_cases: ‡ where † would stand, and the note says what each means."""
    cells = pd.DataFrame([
        {**cell("air", "paired", "2.1", 0.85, 0.7, 0.98, True), "few_cases": True},
        {**cell("hbr", "paired", "2.2", 0.06, 0.01, 0.12, True), "few_cases": False},
        {**cell("delta_htr", "paired", "2.1", 0.01, -0.02, 0.04, False), "few_cases": True},
    ])
    figure = figures.paired_metrics(cells, ["c"], "t", [("paired", {"visibility": "paired"})])
    assert [p.marks for p in figure.panels] == [[], [], ["‡"], ["†"]]
    assert "‡ it does, but over too few cases" in figure.svg()
