"""The cross-engine macros (macros/cross_db.sql, bootstrap.sql, tts_json.sql, hb_prompts.sql,
spark_literals.sql) give the same values on DuckDB and on Apache Spark, for values whose engine
defaults differ: dbt-spark runs with ANSI mode off, so a wrong regex, cast or JSON call gives NULL or
another text there, not an error. Each macro is compiled by dbt for each target (`dbt compile
--inline`, so dispatch picks the engine's version) and the compiled SQL runs on DuckDB and on a
local Spark session with the project's SQL settings (ingest/spark/server.py SQL_SETTINGS).

Needs the `spark` extra and Java 17; skipped without them, except where HINDSIGHT_REQUIRE_SPARK=1
(.ci/run) turns the skip into a failure."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import PROJECT, cli_env, new_warehouse, require_spark

pytestmark = pytest.mark.slow

# values chosen where the engines' defaults part: POSIX classes and non-ASCII letters in a regex,
# '0x…' text cast to an integer, integral doubles printed as text, JSON escapes of quotes,
# backslashes, control characters and non-ASCII text, NULLs inside an ordered aggregate
ROWS = [
    ("Admitted to ICU.", 24.0, "sepsis", 123456789, "g1", 2),
    ("  BP 80/40 -- started NOREPINEPHRINE (0.1 mcg/kg/min)!", -6.5, "glp1", 2147483646, "g1", 1),
    ('Café "quoted" \\ back\tslash', 0.25, "cohort with spaces", 0, "g1", 3),
    ("naïve_ÉVÉNEMENT ß 42", 1e14, "", 65535, "g2", 1),
    (None, 12.0, "x", 1, "g2", 2),
    ("line\nbreak", 1.0 / 3.0, "ünïcode", 99999, "g2", 3),
]

SCALARS = """
select
    v.pos,
    {{ normalised_event_text('v.event') }} as normalised,
    {{ hours_text('v.hours') }} as hours,
    {{ bootstrap_cohort_key('v.cohort') }} as cohort_key,
    {{ bootstrap_mix_round('v.h') }} as mixed,
    {{ json_string('v.event') }} as event_json
from (VALUES_HERE) as v (event, hours, cohort, h, grp, pos)
"""

AGGREGATES = """
select
    v.grp,
    {{ tts_json_agg('v.event', 'v.hours', 'v.pos') }} as tts_json,
    {{ tts_lines_agg('v.event', 'v.hours', 'v.pos') }} as tts_lines
from (VALUES_HERE) as v (event, hours, cohort, h, grp, pos)
group by v.grp
"""


def _literal(value, engine: str) -> str:
    """A value as a SQL literal each engine reads as the same value: on Spark (escapedStringLiterals, as
    the project runs it) a literal is its text, an apostrophe or backslash spelled with chr()."""
    if value is None:
        return "cast(null as string)"
    if isinstance(value, float):
        return f"cast({value!r} as double)"
    if isinstance(value, int):
        return f"cast({value} as bigint)"
    if engine == "duckdb":
        return "'" + value.replace("'", "''") + "'"
    return "(" + " || chr(39) || ".join(" || chr(92) || ".join(f"'{bit}'" for bit in part.split("\\"))
                                        for part in value.split("'")) + ")"


def _values(engine: str) -> str:
    return "values " + ", ".join("(" + ", ".join(_literal(v, engine) for v in row) + ")" for row in ROWS)


def _compile(db: Path, target: str, sql: str) -> str:
    dbt = os.path.join(os.path.dirname(sys.executable), "dbt")
    done = subprocess.run([dbt, "compile", "--target", target, "--inline", sql, "--output", "json", "--quiet"],
                          cwd=PROJECT, capture_output=True, text=True, env=cli_env(db))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(done.stdout[done.stdout.index("{"):])["compiled"]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    require_spark()
    from pyspark.sql import SparkSession

    folder = tmp_path_factory.mktemp("spark")
    from ingest.spark.server import SQL_SETTINGS

    builder = (SparkSession.builder.master("local[2]").appName("hindsight-macro-tests")
               .config("spark.sql.catalogImplementation", "in-memory").config("spark.ui.enabled", "false")
               .config("spark.sql.warehouse.dir", str(folder / "warehouse")))
    for key, value in SQL_SETTINGS.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    yield session, new_warehouse(folder)
    session.stop()


def _run_both(spark, template: str) -> tuple[list[tuple], list[tuple]]:
    session, db = spark
    on_duckdb = _compile(db, "dev", template).replace("VALUES_HERE", _values("duckdb"))
    on_spark = _compile(db, "spark", template).replace("VALUES_HERE", _values("spark"))
    with duckdb.connect() as con:
        expected = sorted(con.execute(on_duckdb).fetchall(), key=repr)
    found = sorted((tuple(row) for row in session.sql(on_spark).collect()), key=repr)
    return expected, found


def test_scalar_macros_agree_on_both_engines(spark):
    expected, found = _run_both(spark, SCALARS)
    assert len(expected) == len(ROWS)
    assert found == expected
    normalised, hours = {row[1] for row in expected}, {row[2] for row in expected}
    # the values the engines' defaults would have spoiled: RE2's [[:alnum:]] is ASCII, so a letter
    # like ï or É becomes a space on both; integral hours print without a decimal point
    assert {"admitted to icu", "bp 80 40 started norepinephrine 0 1 mcg kg min", "na ve v nement 42"} <= normalised
    assert {"24", "-6.5", "0.25", "100000000000000", "0.3333333333333333"} <= hours
    assert all(isinstance(row[3], int) and row[3] >= 0 for row in expected)        # no NULL from a '0x…' cast
    assert all(isinstance(row[4], int) for row in expected)


def test_ordered_aggregates_agree_on_both_engines(spark):
    expected, found = _run_both(spark, AGGREGATES)
    assert found == expected
    groups = dict((row[0], row[1]) for row in expected)
    parsed = json.loads(groups["g1"])
    assert [item["time"] for item in parsed] == [-6.5, 24, 0.25]          # in position order, numbers as numbers
    assert parsed[2]["event"] == 'Café "quoted" \\ back\tslash'


# values the cross-database macros meet: JSON with escapes, nesting, nulls and non-ASCII text;
# regex subjects with digits and backslashes (a pattern's \\d is a digit only if the literal keeps
# its backslash); annotator lists; an apostrophe and a trailing backslash in a literal
DOCUMENTS = [
    ('{"question": "It\'s \\"odd\\"?", "options": ["A. <10%", "B. café"], "early_cutoff": {"event": "ICU", "time": 6}, '
     '"sample_index": 2}', "Patient 12 at 24 h", '["ann-1", "ann-2", "ann-3", "ann-4"]', "ann-3", "it's \\", 1),
    ('{"question": "Plain", "options": "not a list", "early_cutoff": {"event": null, "time": -1.5}}', "no digit here",
     '["x", "y"]', "z", "back\\slash d", 2),
    ('{"question": "Ünïcode ☃", "options": [], "early_cutoff": {"time": 1e3}}', "\\d literally", '[]', "x", "", 3),
]

DOCUMENT_SCALARS = r"""
select
    v.pos,
    {{ json_text('v.doc', 'question') }} as question,
    {{ json_text('v.doc', 'early_cutoff', 'event') }} as cutoff_event,
    cast({{ json_text('v.doc', 'early_cutoff', 'time') }} as double) as cutoff_time,
    coalesce(cast({{ json_text('v.doc', 'sample_index') }} as integer), 0) as sample_index,
    {{ json_array_text('v.doc', 'options') }} as options_json,
    {{ json_sorted_keys('v.doc') }} as keys,
    {{ json_list_position('v.annotators', 'v.annotator') }} as annotator_position,
    {{ regex_search('v.subject', "'\d+'") }} as has_digits,
    {{ regex_search('v.subject', "'^\\\\d'") }} as starts_with_backslash_d,
    {{ regex_search('v.literal', "'\\\\$'") }} as ends_with_backslash,
    {{ int_div('cast(v.pos as bigint) * 4294967296 + 7', 4294967296) }} as load_of_key,
    {{ json_object_text([('question', json_text('v.doc', 'question')), ('n', 'v.pos'), ('none', 'cast(null as string)')]) }}
        as object_text,
    {%- set keys = ['question', 'early_cutoff', 'sample_index', 'options'] %}
    {%- for key in keys %}
    {{ json_texts_item(json_texts('v.doc', keys), keys, key) }} as parsed_once_{{ key }}{{ ',' if not loop.last }}
    {%- endfor %}
from (VALUES_HERE) as v (doc, subject, annotators, annotator, literal, pos)
"""

DOCUMENT_AGGREGATES = """
select
    {{ ordered_string_agg('v.subject', "' | '", 'v.pos desc') }} as subjects_in_order,
    {{ sorted_distinct_string_agg('v.annotator', "','") }} as annotators,
    {{ json_map_agg('v.annotator', 'v.pos') }} as position_of
from (VALUES_HERE) as v (doc, subject, annotators, annotator, literal, pos)
"""


def _run_documents(spark, template: str, rows: list[tuple] = DOCUMENTS) -> tuple[list[tuple], list[tuple]]:
    session, db = spark
    values = {engine: "values " + ", ".join("(" + ", ".join(_literal(v, engine) for v in row) + ")" for row in rows)
              for engine in ("duckdb", "spark")}
    with duckdb.connect() as con:
        expected = sorted(con.execute(_compile(db, "dev", template).replace("VALUES_HERE", values["duckdb"])).fetchall(),
                          key=repr)
    found = sorted((tuple(row) for row in session.sql(_compile(db, "spark", template).replace(
        "VALUES_HERE", values["spark"])).collect()), key=repr)
    return expected, found


def test_json_regex_and_arithmetic_macros_agree_on_both_engines(spark):
    expected, found = _run_documents(spark, DOCUMENT_SCALARS)
    assert len(found) == len(expected) == len(DOCUMENTS)
    assert found == expected
    first, second, third = expected
    assert first[1:5] == ("It's \"odd\"?", "ICU", 6.0, 2) and json.loads(first[5]) == ["A. <10%", "B. café"]
    assert second[2] is None and second[5] is None and third[5] == "[]"      # a JSON null; options not a list
    assert first[6] == "early_cutoff,options,question,sample_index"
    assert (first[7], second[7]) == (3, None)                                 # 1-based, NULL when absent
    # '\d' kept its backslash on Spark: a digit class, not the letter d
    assert [row[8] for row in expected] == [True, False, False]
    assert [row[9] for row in expected] == [False, False, True] and [row[10] for row in expected] == [True, False, False]
    assert [row[11] for row in expected] == [1, 2, 3]
    assert json.loads(first[12]) == {"question": "It's \"odd\"?", "n": 1, "none": None}
    # several keys from one parse give what json_text gives: a string as itself, a number or an object
    # or array as its JSON text, an absent key as NULL
    assert first[13] == "It's \"odd\"?" and json.loads(first[14]) == {"event": "ICU", "time": 6}
    assert (first[15], second[15]) == ("2", None) and json.loads(first[16]) == ["A. <10%", "B. café"]
    assert third[16] == "[]" and second[16] == "not a list"


def test_ordered_and_distinct_string_aggregates_agree_on_both_engines(spark):
    expected, found = _run_documents(spark, DOCUMENT_AGGREGATES)
    assert found == expected
    assert expected[0][0] == "\\d literally | no digit here | Patient 12 at 24 h"
    assert expected[0][1] == "ann-3,x,z" and json.loads(expected[0][2]) == {"ann-3": 1, "x": 3, "z": 2}


def test_spark_literals_keep_apostrophes_and_backslashes(spark):
    """Seeds and unit-test fixtures go through spark__escape_single_quotes: with escapedStringLiterals a
    backslash before an apostrophe would end the literal early or stay in the value."""
    session, db = spark
    texts = ["it's", "ends with \\", "\\'both\\'", "plain"]
    sql = _compile(db, "spark", "select " + ", ".join(
        f"'{{{{ spark__escape_single_quotes({json.dumps(text)}) }}}}' as c{i}" for i, text in enumerate(texts)))
    assert list(session.sql(sql).collect()[0]) == texts


# the HindsightBench prompt texts: lines split at newlines (a trailing one ends the last line), a
# snapshot line's value trimmed of tabs and spaces, sketch directions one character each
PROMPTS = [
    ("Decision time point: 2019-03-01 - ok.\n- CPIAUCSL: vintage_date=2019-02-01, value= \t3.5 \n", "+-+", 1),
    ("one line, no newline", "-", 2),
    ("a\n\nb\n", "", 3),
]

LISTS = r"""
select
    v.pos,
    lines.line_no,
    lines.line,
    {{ regex_replace_all('lines.line', "'^\s+|\s+$|\d'", "''") }} as trimmed_without_digits
from (VALUES_HERE) as v (text, directions, pos)
{{ lateral_items(hb_split_lines('v.text'), 'line', 'line_no', 'lines') }}
union all
select v.pos, items.position, items.direction, null
from (VALUES_HERE) as v (text, directions, pos)
{{ lateral_items(split_text('v.directions', "''"), 'direction', 'position', 'items') }}
where v.directions != ''
union all
select -1, anchors.position, anchors.anchor, null
from {{ enumerated_values(['2025-11-01', '2026-02-01'], 'anchor', 'position') }} as anchors
union all
select 0, 0, months.decision_date, null
from {{ month_starts('2025-11-01', '2026-02-01', 'decision_date') }} as months
"""


def test_list_and_text_macros_agree_on_both_engines(spark):
    expected, found = _run_documents(spark, LISTS, PROMPTS)
    assert found == expected
    lines = {(pos, number): (line, trimmed) for pos, number, line, trimmed in expected if trimmed is not None}
    assert lines[(1, 2)] == ("- CPIAUCSL: vintage_date=2019-02-01, value= \t3.5 ", "- CPIAUCSL: vintage_date=--, value= \t.")
    assert (1, 3) not in lines and lines[(2, 1)][0] == "one line, no newline"
    assert [lines[(3, n)][0] for n in (1, 2, 3)] == ["a", "", "b"] and (3, 4) not in lines
    assert sorted((n, d) for pos, n, d, trimmed in expected if pos == 1 and trimmed is None) == [(1, "+"), (2, "-"), (3, "+")]
    # a list var's values with their positions; the months from the first to the last, as texts
    assert [(n, d) for pos, n, d, _ in expected if pos == -1] == [(1, "2025-11-01"), (2, "2026-02-01")]
    assert [d for pos, _, d, _ in expected if pos == 0] == ["2025-11-01", "2025-12-01", "2026-01-01", "2026-02-01"]
