"""Numbers rounded alike everywhere (ingest/publish/numbers.py): halves away from zero, as DuckDB's
round() and the d3 formats Superset draws with, never half to even beside half up."""
from __future__ import annotations

import duckdb
import pytest

from ingest.publish.numbers import fixed


@pytest.mark.parametrize("value, places, signed, shown", [
    (0.0625, 3, False, "0.063"), (-0.0625, 3, False, "-0.063"), (0.1875, 3, True, "+0.188"), (0.3125, 3, False, "0.313"),
    (2.675, 2, False, "2.67"),          # 2.675 is 2.67499… in binary: down, as DuckDB and a browser round it
    (-0.0001, 3, True, "0.000"), (0.0, 3, True, "0.000"), (1, 3, False, "1.000"), (None, 3, False, ""),
    (float("nan"), 3, False, ""), (0.47899999999999987, 3, False, "0.479")])
def test_fixed_rounds_halves_away_from_zero(value, places, signed, shown):
    assert fixed(value, places, signed) == shown


def test_fixed_agrees_with_duckdbs_round_on_the_halves_that_differ_from_printf():
    values = [i / 16 for i in range(-32, 33)] + [i / 32 for i in range(-64, 65)]
    con = duckdb.connect()
    rounded = con.execute("select printf('%.3f', round(v, 3)) from unnest(?::double[]) as t(v)", [values]).fetchall()
    assert [fixed(v) for v in values] == [r[0].replace("-0.000", "0.000") for r in rounded]
