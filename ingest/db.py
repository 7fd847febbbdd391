"""Warehouse file location and the raw schema the loaders append to.

DuckDB allows one writing process per file, so every command opens the
warehouse briefly, does its work in one transaction and closes it again.
"""
from __future__ import annotations

import os
import re
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Iterator

import duckdb
import pyarrow as pa
import yaml

from ingest.errors import InputError

PROJECT_DIR = Path(__file__).resolve().parent.parent

RAW_DDL_TEMPLATE = """
create schema if not exists raw;

-- one row per file a load command looked at (loaded, rejected whole or skipped)
create table if not exists raw.loads (
    load_id           integer not null,
    kind              varchar not null,   -- narrative | tts | questions | responses
    cohort            varchar,
    source            varchar,
    case_id           varchar,
    source_file       varchar not null,
    file_sha256       varchar,
    status            varchar not null,   -- loaded | rejected | skipped
    reason            varchar,
    n_records         integer,
    loaded_at         timestamp not null
);

-- one row per `hindsight build` that ended well: what it built from (ingest/build.py), so the
-- next build refreshes only what was loaded since
create table if not exists raw.builds (
    built_at          timestamp not null,
    fingerprint       varchar not null,   -- the project's files and the build's arguments
    signatures        json not null,      -- {raw table: row count and order-free sum of row hashes}
    scope             varchar not null    -- everything | the dbt selection it ran
);

-- the same for `hindsight build --target spark`, per Spark catalog (ingest/spark/build.py)
create table if not exists raw.spark_builds (
    built_at          timestamp not null,
    fingerprint       varchar not null,
    signatures        json not null,
    scope             varchar not null,
    catalog           varchar not null    -- the catalog's folder (in-process) or its Connect server
);

create table if not exists raw.narratives (
    load_id           integer not null,
    cohort            varchar not null,
    case_id           varchar not null,
    source_file       varchar not null,
    encoding          varchar not null,
    narrative_text    varchar not null,
    loaded_at         timestamp not null
);

-- every record of every TTS file, verbatim, with the fields the format gives
create table if not exists raw.tts_records (
    load_id           integer not null,
    cohort            varchar not null,
    case_id           varchar not null,
    source            varchar not null,
    source_file       varchar not null,
    file_format       varchar not null,   -- bsv | csv | json | jsonl
    file_status       varchar not null,   -- loaded | rejected
    line_number       integer not null,
    record_text       varchar not null,
    n_fields          integer not null,
    event_text        varchar,
    time_text         varchar,
    loaded_at         timestamp not null
);

create table if not exists raw.questions (
    load_id           integer not null,
    source_file       varchar not null,
    line_number       integer not null,
    question_id       varchar not null,
    cohort            varchar not null,
    case_id           varchar not null,
    content_sha256    varchar not null,
    payload           json not null,
    loaded_at         timestamp not null
);

create table if not exists raw.responses (
    load_id           integer not null,
    source_file       varchar not null,
    line_number       integer not null,
    response_id       varchar not null,
    question_id       varchar not null,
    model             varchar not null,
    condition         varchar not null,
    visibility        varchar not null,
    prompt_variant    varchar not null,
    answer            varchar,
    evidence          varchar,
    payload           json not null,
    loaded_at         timestamp not null
);

-- condition 3.x synthetic narratives, appended by the narrative runner
create table if not exists raw.synthetic_narratives (
    narrative_request_id varchar not null,
    model             varchar not null,
    narrative_text    varchar not null,
    generated_at      timestamp not null
);

-- free-response judgments (paper Appendix C judge prompts), appended by the
-- judge runner: `individual` scores one answer, `paired` a full/masked pair
create table if not exists raw.judgments (
    judgment_id          varchar not null,
    kind                 varchar not null,   -- individual | paired
    response_id          varchar,            -- individual
    full_response_id     varchar,            -- paired
    masked_response_id   varchar,            -- paired
    judge_model          varchar not null,
    {judgment_scores}
    raw_output           varchar,
    judged_at            timestamp not null
);

-- judgments loaded from files (`hindsight load judgments`), naming their answers as responses
-- name them: matching them to answers is the build's job (int_loaded_judgments_matched), so they
-- can be loaded before the questions and answers they judge
create table if not exists raw.loaded_judgments (
    load_id               integer not null,
    source_file           varchar not null,
    line_number           integer not null,
    judgment_id           varchar not null,
    kind                  varchar not null,   -- individual | paired
    question_id           varchar not null,
    model                 varchar not null,   -- the answering model, as responses name it
    condition             varchar not null,
    visibility            varchar,            -- individual: the judged answer's
    prompt_variant        varchar not null,
    sample_index          integer not null,
    judge_model           varchar not null,
    {judgment_scores}
    record                json not null,      -- the line as loaded (a rationale and other fields kept)
    loaded_at             timestamp not null
);

-- one row per model call the runners made (a call id is stored at most once
-- with status ok); keys are never stored
create table if not exists raw.llm_calls (
    call_id              varchar not null,
    purpose              varchar not null,   -- answer | narrative | judge
    target_id            varchar not null,   -- request_id | narrative_request_id | judged response ids
    provider             varchar not null,
    model                varchar not null,   -- as given to --model
    base_url_host        varchar,
    reported_model       varchar,
    temperature          double,
    max_tokens           integer,
    prompt_variant       varchar,
    warning_position     varchar,
    prompt_template_version varchar not null,
    response_text        varchar,
    parse_status         varchar,
    parser_version       varchar,
    input_tokens         integer,
    output_tokens        integer,
    latency_ms           double,
    started_at           timestamp not null,
    finished_at          timestamp not null,
    status               varchar not null,   -- ok | error
    error                varchar,
    settings_sent        json                -- the sampling fields as sent (seeds/model_capabilities.csv)
);
-- warehouses made before the ledger recorded the settings sent, samples, why a reply ended
-- (finish_reason: length / max_tokens / max_output_tokens mean truncated) and reasoning text
alter table raw.llm_calls add column if not exists settings_sent json;
alter table raw.llm_calls add column if not exists sample_index integer;
alter table raw.llm_calls add column if not exists sampling_profile varchar;
alter table raw.llm_calls add column if not exists finish_reason varchar;
alter table raw.llm_calls add column if not exists reasoning_text varchar;
-- the batch a call was answered in (NULL for a direct call): priced at the batch rate
alter table raw.llm_calls add column if not exists batch_key varchar;

-- provider batches (OpenAI Batch, Anthropic Message Batches). A row and the calls in it are written
-- in one transaction before anything is sent (status `preparing`); the provider's ids follow as they
-- exist, so a crash at any point is found again on the next run (OpenAI: by the metadata and file
-- name that carry batch_key; Anthropic: by creation time and size)
create table if not exists raw.batches (
    batch_key            varchar not null,   -- ours, made before submission
    provider             varchar not null,
    model                varchar not null,   -- as given to --model
    base_url             varchar,            -- where the batch lives (collection may run in another process)
    base_url_host        varchar,
    endpoint             varchar not null,   -- /v1/chat/completions | /v1/responses | /v1/messages
    purpose              varchar not null,   -- answer | narrative | judge | questions | questions_repair
    n_requests           integer not null,
    input_bytes          bigint not null,
    input_file_id        varchar,            -- OpenAI: the uploaded JSONL
    batch_id             varchar,            -- the provider's id, once the batch exists
    -- preparing | validating | in_progress | finalizing | completed | ended | expired | cancelling
    -- | cancelled | failed, then collected (results stored) or abandoned (never reached the provider)
    status               varchar not null,
    provider_status      varchar,            -- the provider's last word (kept after collection)
    n_succeeded          integer,
    n_errored            integer,
    n_expired            integer,
    n_cancelled          integer,
    n_stored             integer,            -- results written to the ledger by collection
    n_duplicates         integer,            -- results for calls already stored (counted, ignored)
    error                varchar,
    submitted_at         timestamp not null,
    updated_at           timestamp not null,
    collected_at         timestamp
);

-- one row per call in a batch: enough to write its result later, from another process
create table if not exists raw.batch_calls (
    batch_key            varchar not null,
    call_id              varchar not null,   -- the request's custom_id
    purpose              varchar not null,
    target_id            varchar not null,
    sample_index         integer not null,
    prompt_variant       varchar,
    warning_position     varchar,
    sampling_profile     varchar,
    settings_sent        json,
    max_tokens           integer,
    context              json not null,      -- what the writer needs (never a hidden field: batches are remote models)
    outcome              varchar             -- NULL while in flight | stored | duplicate | errored | expired | cancelled | missing
);

-- human validation (paper §3.8, Appendix G): sampling designs, their cases, who assesses which
-- case, and the assessments loaded back from the packets (newest version per annotator and item)
create table if not exists raw.validation_designs (
    design_id            varchar not null,
    model                varchar not null,   -- whose answers gave EPS
    fraction             double not null,
    tau                  double not null,
    seed                 bigint not null,
    annotators           json not null,      -- four names: the first two assess half 1, the last two half 2
    simulations          integer not null,   -- draws behind each inclusion probability
    created_at           timestamp not null
);

create table if not exists raw.validation_cases (
    design_id            varchar not null,
    cohort               varchar not null,
    case_id              varchar not null,
    inaccuracy           double,             -- the EPS components before normalisation
    htr                  double,
    air                  double,
    hbr                  double,
    eps                  double not null,
    weight               double not null,
    inclusion_probability double not null,
    inclusion_probability_se double not null,
    sampled              boolean not null,
    half                 integer,
    draw_order           integer
);

create table if not exists raw.validation_assignments (
    design_id            varchar not null,
    annotator            varchar not null,
    cohort               varchar not null,
    case_id              varchar not null
);

create table if not exists raw.annotations (
    load_id              integer not null,
    source_file          varchar not null,
    line_number          integer not null,
    design_id            varchar not null,
    cohort               varchar not null,
    annotator            varchar not null,
    case_id              varchar not null,
    question_id          varchar not null,
    reasonable           varchar,            -- yes | no | na | NULL (unanswered)
    agree_reference      varchar,
    agree_trap           varchar,
    comment              varchar,
    content_sha256       varchar not null,
    loaded_at            timestamp not null
);

create table if not exists raw.judge_checks (
    load_id              integer not null,
    source_file          varchar not null,
    line_number          integer not null,
    design_id            varchar not null,
    cohort               varchar not null,
    annotator            varchar not null,
    case_id              varchar not null,
    question_id          varchar not null,
    response_id          varchar,
    judge_model          varchar,
    judge_accuracy_score double,
    judge_htr_score      double,
    human_accuracy_score double,
    human_htr_score      double,
    comment              varchar,
    content_sha256       varchar not null,
    loaded_at            timestamp not null
);

-- HindsightBench release layout (hindsight/outputs/bench/<model>/...)
create table if not exists raw.hb_cells (
    load_id              integer not null,
    model_key            varchar not null,
    arm                  varchar not null,
    rep                  integer not null,
    decision_date        varchar not null,
    cell_path            varchar not null,
    cell_status          varchar not null,   -- sketches | parse_error | empty
    valid_count          integer,
    invalid_count        integer,
    loaded_at            timestamp not null
);

create table if not exists raw.hb_sketches (
    load_id              integer not null,
    model_key            varchar not null,
    arm                  varchar not null,
    rep                  integer not null,
    decision_date        varchar not null,
    sketch_index         integer not null,
    direction            varchar,
    hypothesis_id        varchar
);

create table if not exists raw.hb_date_probes (
    load_id              integer not null,
    model_key            varchar not null,
    line_number          integer not null,
    decision_date        varchar not null,
    estimated_date       varchar,
    raw_reply            varchar
);

create table if not exists raw.hb_lap_probes (
    load_id              integer not null,
    model_key            varchar not null,
    line_number          integer not null,
    decision_date        varchar not null,
    rep                  integer,
    answer               varchar
);

create table if not exists raw.hb_panel_dates (
    load_id              integer not null,
    decision_date        varchar not null
);

create table if not exists raw.hb_spx (
    load_id              integer not null,
    trading_date         varchar not null,
    forward_return_20d   double
);

-- HindsightBench panel inputs: the 240 pre-cutoff V1 requests (one system instruction, one user text
-- per date) and the post-cutoff ALFRED snapshots (values as the release's JSON spells them); dbt
-- builds every arm and probe prompt from these (fct_hb_requests)
create table if not exists raw.hb_panel_requests (
    load_id              integer not null,
    decision_date        varchar not null,
    request_key          varchar not null,
    system_text          varchar not null,
    user_text            varchar not null
);

create table if not exists raw.hb_postcutoff_snapshots (
    load_id              integer not null,
    decision_date        varchar not null,
    series_id            varchar not null,
    vintage_date         varchar not null,
    vintage_value        varchar not null,
    revised_value        varchar not null
);

-- whole replies to HindsightBench requests, from a release (a cell's 04_raw_response.txt) or asked
-- here by the runner (one row per call); the dbt parsers read both the same way
create table if not exists raw.hb_responses (
    load_id              integer not null,
    model_key            varchar not null,
    source               varchar not null,   -- release | runner
    kind                 varchar not null,   -- arm | rec | lap
    arm                  varchar,            -- R, D, M, W, W72 (kind arm)
    decision_date        varchar not null,
    replicate            integer,            -- arm replicate, 1-based (the release's rep<k>)
    sample               integer,            -- LAP sample, 0-based
    request_id           varchar,            -- fct_hb_requests.request_id (runner)
    call_id              varchar,            -- raw.llm_calls.call_id (runner)
    reply_text           varchar,
    finish_reason        varchar,            -- length / max_tokens / max_output_tokens: truncated, no cell
    received_at          timestamp not null
);

-- models registered for an audit by `hindsight audit plan|run` (the release's rows are the seed
-- hb_registry); a later row_version of a key replaces the earlier
create table if not exists raw.hb_registry (
    model_key            varchar not null,
    row_version          integer not null,
    display              varchar,
    generation           varchar,
    provider             varchar not null,
    model_spec           varchar not null,   -- PROVIDER:MODEL as given to --model
    tier                 varchar,
    sampling             varchar,
    serving_quantization varchar,
    thinking_regime      varchar,
    retrieval            varchar not null,
    parser_version       varchar,
    vendor_cutoff        varchar,            -- YYYY-MM as the vendor states it
    vendor_cutoff_read_on varchar,
    registered_at        timestamp not null
);

-- warehouses made before the LAP re-probes (hindsightbench.md §7.2) and serving variants: a probe line or
-- reply belongs to the protocol's set or to the lap-sensitivity set (re-probes at another temperature,
-- or more samples); a registry row may name the model it is a serving configuration of
alter table raw.hb_lap_probes add column if not exists probe_set varchar default 'protocol';
alter table raw.hb_lap_probes add column if not exists temperature double;
alter table raw.hb_responses add column if not exists probe_set varchar default 'protocol';
alter table raw.hb_responses add column if not exists temperature double;
alter table raw.hb_registry add column if not exists serving_variant_of varchar;

-- the preregistered smoke gate: a model's smoke replies were looked at before a larger tier runs
create table if not exists raw.hb_inspections (
    model_key            varchar not null,
    inspected_at         timestamp not null,
    smoke_cells          integer not null,
    parsed_cells         integer not null,
    note                 varchar
);

-- rows of question/response files that were rejected, with the fix
create table if not exists raw.rejected_rows (
    load_id           integer not null,
    kind              varchar not null,
    source_file       varchar not null,
    line_number       integer not null,
    field             varchar not null,
    reason            varchar not null,
    fix               varchar not null,
    record_text       varchar not null,
    loaded_at         timestamp not null
);

-- Great Expectations results, one row per expectation per validation run
create table if not exists raw.validations (
    load_id           integer not null,
    kind              varchar not null,
    suite             varchar not null,
    expectation       varchar not null,
    column_name       varchar,
    severity          varchar not null,   -- critical | warning
    success           boolean not null,
    unexpected_count  integer,
    element_count     integer,
    details           json,
    validated_at      timestamp not null
);
"""


@lru_cache(maxsize=1)
def project_vars() -> dict:
    """The vars of dbt_project.yml, as declared (ingest.config.protocol_vars reads them through here)."""
    with (PROJECT_DIR / "dbt_project.yml").open(encoding="utf-8") as handle:
        return dict(yaml.safe_load(handle)["vars"])


def judgment_score_columns() -> list[tuple[str, str]]:
    """A judgment's score columns and their types, declared once: dbt_project.yml's var
    judgment_score_columns, which the staging models and int_judgments read too."""
    return [(name, dtype) for name, dtype in project_vars()["judgment_score_columns"]]


# {judgment_scores}: the score columns of raw.judgments and raw.loaded_judgments; a warehouse made
# before a score existed gains its column (at the end: the staging models select by name)
RAW_DDL = RAW_DDL_TEMPLATE.replace("    {judgment_scores}\n", "".join(
    f"    {name:<21} {dtype},\n" for name, dtype in judgment_score_columns())) + "".join(
    f"alter table raw.{table} add column if not exists {name} {dtype};\n"
    for table in ("judgments", "loaded_judgments") for name, dtype in judgment_score_columns())


def warehouse_path() -> Path:
    """The warehouse named by HINDSIGHT_DB (relative to the working directory),
    or warehouse.duckdb in the project root."""
    value = os.environ.get("HINDSIGHT_DB")
    if value:
        return Path(value).expanduser().resolve()
    return PROJECT_DIR / "warehouse.duckdb"


SERVE_ENV = "HINDSIGHT_SERVE"


def serve_path(warehouse: Path) -> Path:
    """The serving file readers connect to (ingest/serve/snapshots.py): $HINDSIGHT_SERVE, else
    `<warehouse stem>.marts.duckdb` beside the warehouse."""
    value = os.environ.get(SERVE_ENV)
    return Path(value).expanduser().resolve() if value else warehouse.parent / f"{warehouse.stem}.marts.duckdb"


LOCK_WAIT_ENV = "HINDSIGHT_LOCK_WAIT"
LOCK_WAIT_DEFAULT = 10.0
HOLDER = re.compile(r"held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")


def lock_wait() -> float:
    """Seconds to wait for another process to release the warehouse ($HINDSIGHT_LOCK_WAIT, default 10)."""
    value = os.environ.get(LOCK_WAIT_ENV, "")
    try:
        return max(0.0, float(value)) if value.strip() else LOCK_WAIT_DEFAULT
    except ValueError:
        raise InputError(LOCK_WAIT_ENV, f"{value!r} is not a number of seconds", f"set {LOCK_WAIT_ENV}=30, for example") from None


MEMORY_LIMIT_ENV, TEMP_DIR_ENV = "HINDSIGHT_MEMORY_LIMIT", "HINDSIGHT_TEMP_DIR"
DEFAULT_MEMORY_LIMIT = "3GB"


def duckdb_settings() -> dict[str, str]:
    """DuckDB's memory limit and spill directory for every connection (the CLI's and dbt's, through
    profiles.yml): a build larger than memory spills to disk instead of failing or taking the machine.
    HINDSIGHT_MEMORY_LIMIT (default 3GB) and HINDSIGHT_TEMP_DIR (default: DuckDB's, beside the file)."""
    settings = {"memory_limit": os.environ.get(MEMORY_LIMIT_ENV) or DEFAULT_MEMORY_LIMIT, "preserve_insertion_order": "false"}
    if os.environ.get(TEMP_DIR_ENV):
        settings["temp_directory"] = os.environ[TEMP_DIR_ENV]
    return settings


def in_use(path: Path, error: Exception) -> InputError:
    """The one message for a warehouse another process holds: who holds it, and what to do."""
    found = HOLDER.search(str(error))
    holder = f"{found['program']}, PID {found['pid']}" if found else "another process"
    return InputError(path, f"the warehouse is in use by another process ({holder})",
                      f"close that program (a load, another build, a notebook or BI tool holding the warehouse itself) or "
                      f"wait for it; {LOCK_WAIT_ENV}=SECONDS waits longer (now {lock_wait():g}); readers never need the "
                      f"warehouse: connect them to the published marts, {serve_path(path)}")


def _is_lock_error(error: Exception) -> bool:
    return isinstance(error, duckdb.IOException) and "lock" in str(error).lower()


def open_warehouse(path: Path, read_only: bool = False, config: dict | None = None) -> duckdb.DuckDBPyConnection:
    """duckdb.connect, waiting up to lock_wait() seconds while another process holds the file (DuckDB
    allows one writer, and no reader beside a writer); then one clear error naming the holder."""
    deadline = time.monotonic() + lock_wait()
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=duckdb_settings() if config is None else config)
        except duckdb.IOException as error:
            if not _is_lock_error(error):
                raise
            if time.monotonic() >= deadline:
                raise in_use(path, error) from None
            time.sleep(0.2)


def wait_until_free(path: Path, config: dict | None = None) -> None:
    """Return once this process could open the warehouse for writing (waiting as open_warehouse does):
    dbt's adapter opens it right after, and never waits itself (ingest/serve/dbt_plugin.py)."""
    open_warehouse(path, config=config).close()


def require_warehouse(path: Path) -> None:
    """Raise InputError unless the warehouse file exists (a reader must not create an empty one)."""
    if not path.exists():
        raise InputError(path, "no warehouse file here",
                         "load data (`hindsight load ...`, or `hindsight demo`) and run `hindsight build`, or set HINDSIGHT_DB "
                         "to your warehouse file")


@contextmanager
def connect(path: Path | None = None, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    path = path or warehouse_path()
    if read_only:
        require_warehouse(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = open_warehouse(path, read_only=read_only)
    try:
        if not read_only:
            con.execute(RAW_DDL)
        yield con
    finally:
        con.close()


def next_load_id(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("select coalesce(max(load_id), 0) + 1 from raw.loads").fetchone()[0]


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list) -> None:
    """Append ROWS (sequences in TABLE's column order) in one statement, through Arrow: executemany
    binds one row at a time, 35 of the 40 s that loading the HindsightBench release's 150 k rows took.
    A column whose Python values Arrow cannot put in one type goes row by row, as before."""
    if not rows:
        return
    columns = list(zip(*rows))
    try:
        incoming = pa.table({f"c{i}": pa.array(values) for i, values in enumerate(columns)})
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        con.executemany(f"insert into {table} values ({', '.join('?' * len(columns))})", rows)
        return
    name = f"incoming_{abs(hash(table))}"
    con.register(name, incoming)
    try:
        con.execute(f"insert into {table} select * from {name}")
    finally:
        con.unregister(name)


def register_run(con: duckdb.DuckDBPyConnection, kind: str, spec: str) -> int:
    """A raw.loads row for one runner command, so what it appends has a load_id like any load."""
    load_id = next_load_id(con)
    con.execute("insert into raw.loads values (?, ?, null, null, null, ?, null, 'loaded', null, null, ?)",
                [load_id, kind, f"hindsight {kind} --model {spec}", datetime.now(timezone.utc).replace(tzinfo=None)])
    return load_id


def require_marts(con: duckdb.DuckDBPyConnection, *names: str) -> None:
    """Raise InputError unless every mart named is built (the runners read their requests from marts)."""
    found = {r[0] for r in con.execute(
        "select table_name from information_schema.tables where table_schema = 'main'").fetchall()}
    missing = set(names) - found
    if missing:
        raise InputError("warehouse", f"marts {', '.join(sorted(missing))} are not built", "run `hindsight build` first")


def fetch_dicts(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict]:
    """The rows of a query as dicts by column name (a requests mart's rows, for rendering prompts)."""
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]
