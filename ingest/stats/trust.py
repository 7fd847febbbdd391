"""How far to trust an interval: from how many cases each method's 95% interval covers as it promises.

seeds/interval_coverage.csv is bench/bench_coverage.py's table: per ci_method, kind of estimate
(single: Acc, HTR; paired: ΔAcc, ΔHTR, AIR, HBR; difference: the two arms of `--compare`) and number
of cases, the coverage averaged over the bench's settings. A method holds its promise from
`min_cases`: the smallest size measured from which that coverage stays at var interval_min_coverage
(92.5%) or above. The mart dim_interval_trust applies the rule in SQL; every interval over fewer
cases is flagged (`few_cases`) with a one-line `caution` that says what the bench measured at its
size: the metric marts (macro select_metric_estimates) and here, for `hindsight metrics`, its
comparisons and the explorer, from the same mart of the same snapshot, so they flag the same cells
with the same words. `derive` is the rule in Python: the bench and a snapshot older than the mart
use it.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ingest.config import protocol_var
from ingest.db import PROJECT_DIR

SEED = PROJECT_DIR / "seeds" / "interval_coverage.csv"
MIN_CASES = 2                      # below it there is no case-clustered interval (nor SE) at all
ONE_CASE = "1 case: no case-clustered interval or SE (they need at least 2 cases)"


def kind_of(visibilities) -> str:
    """A metric's kind by its visibilities: paired metrics are paired, the others single."""
    return "paired" if "paired" in visibilities else "single"


def derive(coverage: pd.DataFrame, level: float) -> pd.DataFrame:
    """dim_interval_trust from COVERAGE (the seed's columns): each measured size's band of cases
    (from_cases .. below_cases - 1; the first band from 2, the last open) and the method's min_cases
    (NaN where no size holds LEVEL)."""
    rows = []
    for (method, kind), sizes in coverage.sort_values("cases").groupby(["ci_method", "kind"], sort=True):
        cases, mean = sizes["cases"].to_numpy(dtype=int), sizes["mean_coverage"].to_numpy(dtype=float)
        short = cases[mean < level]
        holding = cases[cases > short.max()] if len(short) else cases
        min_cases = int(holding.min()) if len(holding) else None
        for i, (n, c) in enumerate(zip(cases, mean)):
            rows.append({"ci_method": method, "kind": kind, "cases": int(n), "from_cases": MIN_CASES if i == 0 else int(n),
                         "below_cases": int(cases[i + 1]) if i + 1 < len(cases) else None, "mean_coverage": float(c),
                         "min_cases": min_cases, "min_coverage": level})
    return pd.DataFrame(rows)


def seed_table() -> pd.DataFrame:
    """The rule over the seed, as a snapshot without dim_interval_trust (built before 2.0.0) is read."""
    return derive(pd.read_csv(SEED), float(protocol_var("interval_min_coverage")))


def table(con) -> pd.DataFrame:
    """dim_interval_trust of the snapshot CON reads, or the rule over the seed where it has none."""
    present = con.execute("select count(*) from information_schema.tables where table_name = 'dim_interval_trust'").fetchall()[0][0]
    return con.sql("select * from dim_interval_trust").df() if present else seed_table()


def percent(value: float) -> int:
    """A share as whole percent, halves away from zero (SQL's round, which the marts use)."""
    return int(math.floor(value * 100 + 0.5))


def caution_text(n_cases: int, method: str, kind: str, trust: pd.DataFrame) -> str | None:
    """The one line a flagged interval carries, None when its cases are enough (or it has none)."""
    if n_cases < 1:
        return None
    if n_cases < MIN_CASES:
        return ONE_CASE
    mine = trust[(trust["ci_method"] == method) & (trust["kind"] == kind)]
    if mine.empty:
        return f"few cases ({n_cases}): the coverage bench has not measured {method} intervals of this kind"
    min_cases = mine["min_cases"].iloc[0]
    if pd.notna(min_cases) and n_cases >= min_cases:
        return None
    band = mine[(mine["from_cases"] <= n_cases) & (mine["below_cases"].isna() | (mine["below_cases"] > n_cases))].iloc[0]
    sizes = (f"{int(band['from_cases'])} or more" if pd.isna(band["below_cases"])
             else f"{int(band['from_cases'])}-{int(band['below_cases']) - 1}")
    holds = f"it holds from {int(min_cases)}" if pd.notna(min_cases) else "it holds at no size measured"
    return (f"few cases ({n_cases}): a {method} interval over {sizes} cases covered {percent(band['mean_coverage'])}%, "
            f"not 95%, in the coverage bench ({holds})")


def flags(n_cases, method: str, kind: str, trust: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per cell: few_cases (bool) and its caution (None where the cases are enough, or there are none)."""
    n_cases = np.asarray(n_cases, dtype=np.int64)
    said = {int(n): caution_text(int(n), method, kind, trust) for n in np.unique(n_cases)}      # a few sizes, many cells
    cautions = np.array([said[int(n)] for n in n_cases], dtype=object)
    return np.array([c is not None for c in cautions], dtype=bool), cautions


def significance_word(significant, few_cases) -> str:
    """'yes' or 'no', and the flag beside a 'yes' over too few cases: never the bare word there."""
    if not is_true(significant):
        return "no"
    return "yes (few cases)" if is_true(few_cases) else "yes"


def is_true(value) -> bool:
    """A boolean that is true (a missing value, NULL or NaN, is not)."""
    return isinstance(value, (bool, np.bool_)) and bool(value)
