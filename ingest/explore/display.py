"""How the explorer's pages show a value: estimates rounded as everywhere else (ingest/publish/numbers),
an interval that never wraps mid-number, and a blank that says why it is blank, never `None`."""
from __future__ import annotations

import math

from markupsafe import Markup, escape

from ingest.publish.numbers import fixed
from ingest.stats.trust import significance_word


def missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def est(value, signed: bool = False, places: int = 3) -> str:
    """An estimate, or a dash."""
    return "—" if missing(value) else fixed(value, places, signed)


def interval(low, high, signed: bool = False) -> Markup:
    """[low, high] kept on one line (a table cell wraps between words, never inside this)."""
    if missing(low) or missing(high):
        return Markup("")
    return Markup('<span class="ci">[{}, {}]</span>').format(fixed(low, signed=signed), fixed(high, signed=signed))


def blank(value, reason: str) -> Markup | str:
    """VALUE, or a dash with the reason it has none."""
    if not missing(value):
        return str(value)
    return Markup('<span class="blank">— <span class="why">({})</span></span>').format(escape(reason))


def undefined(reasons: str | None, name: str) -> str:
    """Why an audit row leaves NAME undefined, from its undefined_reasons ("name: why; other: why")."""
    said = [part.split(":", 1)[1].strip() for part in (reasons or "").split("; ") if part.startswith(f"{name}:")]
    return "; ".join(said) or "no reason recorded"


def significance(significant, few_cases, caution=None) -> Markup:
    """'yes' or 'no', and beside a 'yes' over too few cases its flag, the caution as its tooltip: the
    word is never shown bare there (ingest/stats/trust.py)."""
    word = significance_word(significant, few_cases)
    if word == "yes (few cases)":
        return Markup('yes <span class="flag" title="{}">few cases</span>').format(caution or "too few cases")
    return Markup(word)


def note(*texts) -> str:
    """The first of TEXTS that says something (a reason, then a caution): never 'nan' or 'None'."""
    return next((t for t in texts if isinstance(t, str) and t), "")
