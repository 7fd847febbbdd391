"""A forest plot of cells, drawn on the server as SVG: each cell's estimate (a dot) and its 95% interval
(a line) against a dashed zero line, one row a cell, in the table's order.

Inline SVG needs no script and no other file, so the page's Content-Security-Policy stays as it is
and the static slice draws the same. It is an image with a title and a description for a screen
reader (the numbers themselves are the table's, beside it), and each row's title is its tooltip.
"""
from __future__ import annotations

import math

from markupsafe import Markup, escape

from ingest.publish.numbers import fixed

WIDTH, LABEL, ROW, TOP, RIGHT = 820, 340, 20, 28, 24
STEPS = (0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5)


def _finite(value) -> float | None:
    return float(value) if value is not None and isinstance(value, (int, float)) and math.isfinite(value) else None


def _ticks(low: float, high: float) -> list[float]:
    step = next((s for s in STEPS if (high - low) / s <= 6), STEPS[-1])
    first = math.ceil(low / step - 1e-9)
    return [round(i * step, 6) for i in range(first, math.floor(high / step + 1e-9) + 1)]


def forest(rows: list[dict], title: str, ident: str = "forest", signed: bool = True) -> Markup:
    """ROWS (label, estimate, low, high, note, flag, caution) as one SVG; NOTE says why a row has no
    interval; a FLAG row (too few cases for its interval to hold 95%) is drawn dashed, its CAUTION in its
    tooltip; IDENT names it in the page (its title and description are found by id)."""
    shown = [r for r in rows if _finite(r.get("estimate")) is not None]
    if not shown:
        return Markup("")
    values = [0.0] + [v for r in shown for v in (_finite(r["estimate"]), _finite(r.get("low")), _finite(r.get("high")))
                      if v is not None]
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or 0.1
    low, high = low - pad, high + pad
    span = WIDTH - RIGHT - LABEL

    def x(value: float) -> float:
        return round(LABEL + (value - low) / (high - low) * span, 1)

    height = TOP + ROW * len(shown) + 8
    number = (lambda v: fixed(v, signed=True)) if signed else fixed
    out = [f'<svg class="forest" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
           f'aria-labelledby="{ident}-t {ident}-d" data-forest>',
           f'<title id="{ident}-t">{escape(title)}</title>',
           f'<desc id="{ident}-d">{len(shown)} cells, each its estimate (a dot) and its 95% interval (a line); the dashed '
           f'line is zero; a dashed interval has too few cases to hold its 95%. The numbers are in the table.</desc>']
    for tick in _ticks(low, high):
        out.append(f'<g class="tick"><line x1="{x(tick)}" x2="{x(tick)}" y1="{TOP - 6}" y2="{height - 8}"/>'
                   f'<text x="{x(tick)}" y="{TOP - 10}" text-anchor="middle">{escape(number(tick) if tick else "0")}</text></g>')
    out.append(f'<line class="zero" x1="{x(0)}" x2="{x(0)}" y1="{TOP - 6}" y2="{height - 8}"/>')
    for i, row in enumerate(shown):
        y = TOP + ROW * i + ROW / 2
        est, lo, hi = _finite(row["estimate"]), _finite(row.get("low")), _finite(row.get("high"))
        said = (f"{row['label']}: {number(est)} [{number(lo)}, {number(hi)}]" if lo is not None and hi is not None
                else f"{row['label']}: {number(est)} ({row.get('note') or 'no interval'})")
        flagged = " flagged" if row.get("flag") is True else ""
        if flagged and row.get("caution") and lo is not None:
            said += f" ({row['caution']})"
        mark = [f'<g class="cell{flagged}" data-cell-plot data-estimate="{est}"><title>{escape(said)}</title>',
                f'<text class="label" x="{LABEL - 8}" y="{y + 4}" text-anchor="end">{escape(_short(row["label"]))}</text>']
        if lo is not None and hi is not None:
            mark.append(f'<line class="interval" x1="{x(lo)}" x2="{x(hi)}" y1="{y}" y2="{y}" data-low="{lo}" data-high="{hi}"/>')
            mark.append(f'<circle class="estimate" cx="{x(est)}" cy="{y}" r="4"/>')
        else:
            mark.append(f'<circle class="estimate open" cx="{x(est)}" cy="{y}" r="4"/>')
        out.append("".join(mark) + "</g>")
    out.append("</svg>")
    return Markup("\n".join(out))


def _short(label: str, limit: int = 52) -> str:
    return label if len(label) <= limit else label[:limit - 1] + "…"
