"""`hindsight build`: dbt build on the warehouse named by HINDSIGHT_DB.

dbt runs in a child process (ingest/dbt_process.py), started before the plan so
that it parses the project meanwhile: it holds its own DuckDB connection for the
whole build, and DuckDB allows one writing process per file, so the CLI closes
its connection before the child builds and opens the file again only after dbt
has exited.

What a build refreshes: everything, or only what was loaded since the last build. A build that
ends well records in raw.builds the project's fingerprint (every file dbt reads or the Python
models import, the dbt and DuckDB versions, and the build's own arguments) and a signature of every
raw table (its row count and the order-free sum of its rows' hashes, so an update in place
counts too). The next `hindsight build` with the same fingerprint runs dbt only on what lies
downstream of the raw tables whose signature changed (`--select source:raw.T+`: their models and
data tests) and on dim_build;
nothing changed, nothing runs. Another fingerprint, a missing model relation, `--all` or no record
builds everything; an explicit selection runs as given. Neither a refresh nor a full build runs the
unit tests or the `equivalence` checks, which test the code, not the data (CODE_CHECKS; the test
suite runs them). Within a selection the incremental models still decide which rows to recompute;
tests/python/test_refresh.py checks that the marts equal a build from scratch.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

from ingest.collect.ingest import ingest as ingest_store
from ingest.config import PACKAGE_DIR, build_ledgers
from ingest.db import PROJECT_DIR, connect, warehouse_path
from ingest.dbt_process import DbtProcess, parse_flags
from ingest.serve.snapshots import current


def dbt_executable() -> str:
    beside = Path(sys.executable).parent / "dbt"
    found = str(beside) if beside.exists() else shutil.which("dbt")
    if not found:
        raise RuntimeError("dbt is not installed in this environment; run `make install`")
    return found


# the incremental tables' shape: one built by an older version lacks the column, or has the one
# marked "-" that this version dropped (incremental builds only append new rows, so a change of
# shape comes with a rebuild from scratch)
INCREMENTAL_FACTS = {("intermediate", "int_answer_pairs"): ["full_response_key"],
                     ("intermediate", "int_answers_scored"): ["is_latest_in_cell", "-cohort", "-response_id"],
                     ("intermediate", "int_metric_case_sums"): ["keyed_by"], ("intermediate", "int_metric_estimates"): ["scored_through"],
                     ("intermediate", "int_metric_estimates_by_eval_target"): ["scored_through"],
                     ("main", "agg_answer_provenance"): ["scored_through"], ("main", "agg_answer_completion"): ["n_context_overflow"],
                     ("intermediate", "int_answer_texts_normalised"): ["texts_fingerprint"],
                     ("intermediate", "int_hb_reply_parses"): ["input_fingerprint"],
                     ("intermediate", "int_hb_audit_estimates"): ["input_fingerprint"],
                     ("intermediate", "int_response_provenance"): ["visibility"]}


def needs_full_refresh(con) -> list[str]:
    """The incremental tables whose stored shape predates this version: rebuilt from scratch once."""
    columns = set(con.execute("select table_schema, table_name, column_name from information_schema.columns").fetchall())
    tables = {(schema, table) for schema, table, _ in columns}
    return [table for (schema, table), marks in INCREMENTAL_FACTS.items() if (schema, table) in tables
            and any(((schema, table, mark.lstrip("-")) in columns) == mark.startswith("-") for mark in marks)]


def refresh_stale(con, args: list[str]) -> list[str]:
    """ARGS, with --full-refresh when an incremental table has the shape of an older version."""
    stale = needs_full_refresh(con)
    if not stale or "--full-refresh" in args:
        return args
    print(f"hindsight: {', '.join(stale)} were built by an older version of the models; rebuilding them from scratch "
          "once (--full-refresh)", file=sys.stderr)
    return [*args, "--full-refresh"]


# what a build's result depends on besides the data: any change here rebuilds everything (the
# Python models import ingest.stats)
PROJECT_INPUTS = ["models", "macros", "seeds", "tests/dbt", "dbt_project.yml", "profiles.yml", "ingest/stats"]


@dataclass(frozen=True)
class Ledger:
    """Where an engine records its builds that ended well, and what their fingerprint covers."""
    table: str                      # raw.<table>
    inputs: tuple[str, ...]         # project files
    packages: tuple[str, ...]       # installed versions
    catalog: str | None = None      # whose builds: a Spark catalog (its folder or server); DuckDB's own file


def duckdb_ledger() -> Ledger:
    return Ledger("builds", tuple(PROJECT_INPUTS), ("dbt-core", "dbt-duckdb", "duckdb"))
# arguments that pick the nodes themselves (the build is then partial: nothing is recorded)
SELECTING = {"--select", "-s", "--selector", "--models", "-m", "--resource-type", "--resource-types", "--inline"}
EVERYTHING = "--all"
# the unit tests and the `equivalence` checks test the code, not the data: `make test` and CI run
# them (`dbt test --select resource_type:unit_test tag:equivalence`), a refresh does not (selectors.yml)
CODE_CHECKS = ["--exclude-resource-type", "unit_test", "--exclude", "tag:equivalence"]


@dataclass
class Scope:
    select: list[str] | None        # None: every node; []: nothing to do
    fingerprint: str
    signatures: dict[str, str]
    record: bool                    # whether a success is the new reference for the next build
    why: str


def project_fingerprint(args: list[str], ledger: Ledger | None = None) -> str:
    ledger = ledger or duckdb_ledger()
    digest = hashlib.sha256()
    for top in ledger.inputs:
        # the package's own folders (ingest/...) are beside the dbt project in a checkout, not in an install
        root = PACKAGE_DIR.parent if top.startswith("ingest/") else PROJECT_DIR
        path = root / top
        files = sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts) if path.is_dir() else [path]
        for file in files:
            digest.update(str(file.relative_to(root)).encode() + b"\0" + file.read_bytes() + b"\0")
    versions = [version(package) for package in ledger.packages]
    digest.update(json.dumps([versions, result_arguments(args)]).encode())
    return digest.hexdigest()


def result_arguments(args: list[str]) -> list[str]:
    """ARGS without those that change how a build runs, not what it builds: --full-refresh rebuilds
    the same marts as a plain full build, and --threads runs the same nodes."""
    kept, skip = [], False
    for arg in args:
        if skip or arg == "--full-refresh" or arg.startswith("--threads="):
            skip = False
        elif arg == "--threads":
            skip = True
        else:
            kept.append(arg)
    return kept


# a DuckDB query uses every core (its threads setting): on a warehouse this large dbt's own
# concurrency only makes big queries compete for the cores and for the memory limit (at 100x the
# paper's cases a full build took 77 s one node at a time, 85 s two at a time), while on a small one
# two nodes at a time hide dbt's per-node overhead
ONE_NODE_AT_A_TIME = 1_000_000


def node_threads(con, args: list[str]) -> list[str]:
    """`--threads 1` for a warehouse of a million answers or more, unless ARGS set --threads."""
    if any(a.split("=")[0] == "--threads" for a in args):
        return []
    answers = con.execute("select count(*) from raw.responses").fetchone()[0]
    return ["--threads", "1"] if answers >= ONE_NODE_AT_A_TIME else []


def raw_signatures(con) -> dict[str, str]:
    ledgers = build_ledgers()
    tables = [name for (name,) in con.execute(
        "select table_name from duckdb_tables() where schema_name = 'raw' order by 1").fetchall() if name not in ledgers]
    return {table: "{}:{}".format(*con.execute(
        f'select count(*), coalesce(sum(hash(whole_row)), 0) from raw."{table}" as whole_row').fetchone())
        for table in tables}


def read_sources() -> set[str]:
    """The raw tables a model reads (`source('raw', T)`): a changed table nothing reads selects nothing
    (the raw schema declares more, such as the batch ledgers: models/staging/raw/_raw__sources.yml)."""
    pattern = re.compile(r"""source\(\s*['"]raw['"]\s*,\s*['"](\w+)['"]\s*\)""")
    return {name for folder in ("models", "macros") for path in (PROJECT_DIR / folder).rglob("*")
            if path.suffix in (".sql", ".py") for name in pattern.findall(path.read_text())}


def model_names() -> set[str]:
    """The models a DuckDB build creates: all but the models in `spark/` folders (Spark's only)."""
    return {path.stem for pattern in ("*.sql", "*.py") for path in (PROJECT_DIR / "models").rglob(pattern)
            if "spark" not in path.relative_to(PROJECT_DIR / "models").parts}


def plan(con, args: list[str], ledger: Ledger | None = None) -> Scope:
    """The scope of `hindsight build ARGS` on the warehouse `con` (its ledger of builds and raw tables).
    A Spark ledger's catalog is not this file: whether its models are all there is checked where the
    catalog is (ingest/spark/scope.py)."""
    ledger = ledger or duckdb_ledger()
    everything = EVERYTHING in args
    args = [a for a in args if a != EVERYTHING]
    fingerprint = project_fingerprint(args, ledger)
    if any(a.split("=")[0] in SELECTING for a in args):
        return Scope(None, fingerprint, {}, False, "your own selection, as given")     # never recorded: no signatures
    signatures = raw_signatures(con)
    last = con.execute(f"select fingerprint, signatures from raw.{ledger.table} where {catalog_is(ledger)} "
                       "order by built_at desc limit 1", [ledger.catalog] if ledger.catalog else []).fetchone()
    present = {name for (name,) in con.execute("select table_name from information_schema.tables").fetchall()}
    missing = sorted(model_names() - present) if ledger.catalog is None else []
    if everything or "--full-refresh" in args or last is None or last[0] != fingerprint or missing:
        why = ("asked for" if everything or "--full-refresh" in args else "no earlier build recorded" if last is None
               else "the project or the build's arguments changed since the last build" if last[0] != fingerprint
               else f"models missing from the warehouse: {', '.join(missing[:5])}")
        return Scope(None, fingerprint, signatures, True, why)
    before = json.loads(last[1])
    changed = sorted(t for t in signatures if before.get(t) != signatures[t])
    read = sorted(set(changed) & read_sources())
    select = [f"source:raw.{t}+" for t in read] + (["dim_build"] if read else [])
    return Scope(select, fingerprint, signatures, True,
                 f"loaded since the last build: {', '.join(changed)}" if changed else "nothing loaded since the last build")


def catalog_is(ledger: Ledger) -> str:
    return "catalog = ?" if ledger.catalog else "true"


def record(con, scope: Scope, ledger: Ledger | None = None) -> None:
    ledger = ledger or duckdb_ledger()
    con.execute(f"insert into raw.{ledger.table} values (?, ?, ?, ?{', ?' if ledger.catalog else ''})",
                [datetime.now(timezone.utc).replace(tzinfo=None), scope.fingerprint, json.dumps(scope.signatures),
                 "everything" if scope.select is None else " ".join(scope.select) or "nothing",
                 *([ledger.catalog] if ledger.catalog else [])])


# the on-run-end hook of every build publishes; this publishes the warehouse as it stands
PUBLISH = ["run-operation", "publish_snapshot"]


def publish(db: Path | None = None) -> bool:
    """Publish the warehouse's public marts as a snapshot for readers (macros/publish_snapshot.sql)."""
    with DbtProcess(db or warehouse_path(), []) as dbt:
        return dbt.build(PUBLISH)


def say_brought(brought) -> None:
    """What the build brought in from the runs' store (ingest/collect/ingest.py)."""
    if brought is None or not any(brought.rows.values()):
        return
    rows = ", ".join(f"{n} {table}" for table, n in brought.rows.items() if n and table not in ("batches", "batch_calls", "hb_registry"))
    going = f" ({brought.running} runs still going: what they store next waits for the next build)" if brought.running else ""
    print(f"hindsight: brought in from the runs' store: {rows or 'batch and registry updates'}{going}", file=sys.stderr)


def build(db: Path | None = None, extra: list[str] | None = None) -> bool:
    """`dbt build` of what the data loaded since the last build touches, or of everything (see the
    module's docstring); a build that ends well becomes the next one's reference."""
    db, extra = db or warehouse_path(), list(extra or [])
    # dbt imports itself and parses the project while the plan reads the raw tables (ingest/dbt_process.py)
    with DbtProcess(db, parse_flags(extra)) as dbt:
        with connect(db) as con:      # creates the raw tables, empty, so dbt finds every source
            say_brought(ingest_store(con, db))
            extra = refresh_stale(con, extra)
            scope = plan(con, extra)
            threads = node_threads(con, extra)
        dbt_args = [a for a in extra if a != EVERYTHING] + threads
        if scope.select == []:
            print(f"hindsight: {scope.why}: nothing to refresh (`hindsight build --all` builds everything)", file=sys.stderr)
            if current(db) is None:       # built before snapshots were published: publish this build once
                return dbt.build(PUBLISH)
            dbt.cancel()
            return True
        if scope.select is not None:
            print(f"hindsight: {scope.why}; refreshing what depends on it (`hindsight build --all` builds everything)",
                  file=sys.stderr)
            dbt_args = dbt_args + ["--select", *scope.select]
        else:
            print(f"hindsight: building everything ({scope.why})" if scope.record else f"hindsight: building {scope.why}",
                  file=sys.stderr)
        if scope.record:
            dbt_args = dbt_args + CODE_CHECKS
        ok = dbt.build(["build", *dbt_args])
    if ok and scope.record:
        with connect(db) as con:
            record(con, scope)
    return ok
