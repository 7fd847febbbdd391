"""Compare every public mart of two warehouse files row for row: the check that a refactor changed
nothing a user sees (and, with --report-changes, how much a deliberate fix moved the metrics).

    .venv/bin/python bench/compare_marts.py OLD.duckdb NEW.duckdb

Rows are compared as sets (order-independent), doubles to 1e-12; columns that differ on every build
(build id and times, load and scoring times) are left out and named; paths into the demo corpus are compared
from `corpus/` on, since the corpus moved with the layout. Exit 1 when a mart differs.
"""
from __future__ import annotations

import argparse
import math
import re
import sys

import duckdb

from ingest.publish.marts import public_marts

VOLATILE = {"built_at", "dbt_invocation_id", "dbt_version", "loaded_at", "first_loaded_at", "last_loaded_at", "scored_at", "scored_through"}
CORPUS = re.compile(r"^.*(demo_corpus|demo/corpus)/")


def _value(value):
    if isinstance(value, str):
        return CORPUS.sub("corpus/", value)
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 12)
    return value


def _columns(con, schema: str, mart: str) -> list[tuple[str, str]]:
    return con.execute("select column_name, data_type from information_schema.columns "
                       "where table_catalog = ? and table_schema = 'main' and table_name = ? order by ordinal_position",
                       [schema, mart]).fetchall()


def compare(old: str, new: str) -> bool:
    con = duckdb.connect()
    con.execute(f"attach '{old}' as old (read_only)")
    con.execute(f"attach '{new}' as new (read_only)")
    same = True
    for mart in public_marts():
        before, after = _columns(con, "old", mart), _columns(con, "new", mart)
        if not before or not after:
            print(f"{mart}: {'new' if not before else 'missing from the new warehouse'}")
            same &= not before
            continue
        added = [column for column in after if column not in before]
        if [column for column in after if column in before] != before:
            print(f"{mart}: columns differ: {sorted(set(before) ^ set(after))}")
            same = False
            continue
        # columns the new version adds are named; the rows are compared on the ones both have
        kept = [name for name, _ in before if name not in VOLATILE]
        select = ", ".join(f'"{name}"' for name in kept)
        rows = {side: sorted((tuple(map(_value, row)) for row in
                              con.execute(f"select {select} from {side}.main.{mart}").fetchall()), key=repr)
                for side in ("old", "new")}
        skipped = [name for name, _ in before if name in VOLATILE]
        verdict = "identical" if rows["old"] == rows["new"] else "DIFFERENT"
        print(f"{mart}: {len(rows['old'])} vs {len(rows['new'])} rows, {verdict}"
              + (f" (left out: {', '.join(skipped)})" if skipped else "")
              + (f" (new columns: {', '.join(name for name, _ in added)})" if added else ""))
        same &= rows["old"] == rows["new"]
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    args = parser.parse_args()
    sys.exit(0 if compare(args.old, args.new) else 1)


if __name__ == "__main__":
    main()
