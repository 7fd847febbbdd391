"""Numbers as every view shows them: estimates to three places, halves away from zero.

One rule for the CLI, the explorer, the report and the Superset bundle's text columns (DuckDB's
round() before printf), which is also the rule of the d3 formats Superset draws its number columns
with: 0.0625 shows as 0.063 everywhere, never 0.062 beside 0.063. The float's exact binary value is
rounded (2.675 is 2.67499… and shows as 2.67, as DuckDB and a browser show it).
"""
from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

PLACES = 3


def fixed(value, places: int = PLACES, signed: bool = False) -> str:
    """VALUE to PLACES decimals, halves away from zero; '' for a missing value or NaN."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    rounded = Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if rounded == 0:
        rounded = abs(rounded)           # never "-0.000"
    return f"{rounded:+f}" if signed and rounded != 0 else f"{rounded:f}"
