"""The raw schema is declared once, in the raw sources YAML (ingest/config.py): every warehouse's raw
tables are created from it, column for column, and a warehouse made before a later column gains it
without losing a row."""
from __future__ import annotations

import duckdb

from ingest.config import raw_ddl, raw_tables
from ingest.db import connect


def declared(table: dict) -> list[tuple]:
    return [(c["name"], c["data_type"].upper(), not (c.get("meta") or {}).get("not_null"),
             (c.get("meta") or {}).get("default")) for c in table["columns"]]


def test_a_new_warehouse_has_the_declared_raw_tables_column_for_column(warehouse):
    with connect(warehouse):                        # as every command opens it
        pass
    with duckdb.connect(str(warehouse), read_only=True) as con:
        made = {}
        for table, column, dtype, nullable, default in con.execute("""
                select table_name, column_name, data_type, is_nullable = 'YES', column_default
                from information_schema.columns where table_schema = 'raw' order by table_name, ordinal_position""").fetchall():
            made.setdefault(table, []).append((column, dtype, nullable, default))
    tables = raw_tables()
    assert set(made) == set(tables)
    for name, table in tables.items():
        assert made[name] == declared(table), name
    # the staging models read them: every table a model reads is declared with its columns described
    assert all(table["columns"] and table.get("description") for table in tables.values())


def test_a_column_added_later_is_nullable_so_an_older_warehouse_can_gain_it():
    late = [(name, c["name"]) for name, table in raw_tables().items() for c in table["columns"]
            if (c.get("meta") or {}).get("added_later")]
    assert ("llm_calls", "batch_key") in late and ("judgments", "accuracy_score") in late
    not_null = {(name, c["name"]) for name, table in raw_tables().items() for c in table["columns"]
                if (c.get("meta") or {}).get("not_null")}
    assert not_null and not set(late) & not_null


def test_an_older_warehouse_gains_the_later_columns_and_keeps_its_rows(warehouse):
    with duckdb.connect(str(warehouse)) as con:
        con.execute("create schema raw")
        for name, table in raw_tables().items():
            older = [c for c in table["columns"] if not (c.get("meta") or {}).get("added_later")]
            con.execute(f"create table raw.{name} ({', '.join(c['name'] + ' ' + c['data_type'] for c in older)})")
        con.execute("insert into raw.hb_lap_probes (load_id, model_key, line_number, decision_date) values (1, 'm', 1, '2024-01-05')")
    with connect(warehouse):
        pass
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select model_key, probe_set, temperature from raw.hb_lap_probes").fetchall() == [("m", "protocol", None)]
        columns = {(t, c) for t, c in con.execute(
            "select table_name, column_name from information_schema.columns where table_schema = 'raw'").fetchall()}
    assert columns == {(name, c["name"]) for name, table in raw_tables().items() for c in table["columns"]}


def test_the_ddl_is_made_from_the_declaration_and_runs_twice():
    with duckdb.connect() as con:
        con.execute(raw_ddl())
        con.execute(raw_ddl())                      # every connection runs it: it must be idempotent
        count = con.execute("select count(*) from information_schema.columns where table_schema = 'raw'").fetchone()[0]
    assert count == sum(len(table["columns"]) for table in raw_tables().values())
