"""`hindsight audit plan|run`: auditing a new model with HindsightBench (the
release's four steps: register, smoke, inspect, full protocol).

dbt decides what to ask: fct_hb_requests holds one row per call of every tier
(arm x date x replicate, REC per date, LAP per date x sample) with the prompt
bytes the release sent and the sampling profile of its kind. The runner asks
a tier's rows exactly once (a call is one replicate or sample of one request:
`reduced` then `full` asks only what `full` adds), stores each whole reply in
raw.hb_responses and the call in the ledger; `hindsight build` parses the
replies (int_hb_reply_parses) and scores them on the same path as a loaded
release. Tiers larger than smoke wait for the smoke inspection
(`hindsight audit inspect --accept`), as the release's preregistration asks.
A truncated reply leaves no cell and is asked again only with
`--retry-truncated` and a larger `--max-tokens`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields
from datetime import datetime, timezone

from ingest.config import protocol_var
from ingest.db import fetch_dicts, register_run, require_marts
from ingest.errors import InputError
from ingest.llm.profiles import Overrides, SettingsResolver
from ingest.llm.providers import Completion, SimulatedModel, make_provider
from ingest.llm.runner import Job, RunSummary, run_jobs
from ingest.llm.simulators.auditees import AUDITEES, SimulatedAuditee

TIERS = {"smoke": "in_smoke", "reduced": "in_reduced", "full-1rep": "in_full_1rep", "full": "in_full",
         # the re-probes a LAP sensitivity check needs (hindsightbench.md §7.2); not a row's tier
         "lap-sensitivity": "in_lap_sensitivity"}
ROW_TIERS = ("smoke", "reduced", "full-1rep", "full")
KINDS = {"arm": "hb_arm", "rec": "hb_date_probe", "lap": "hb_lap"}     # request kind -> sampling profile kind
# the finish reasons that mean a reply was cut off: one home, the dbt var the staging model reads
TRUNCATED = tuple(protocol_var("hb_truncated_finish_reasons"))
# output tokens per call when nothing of the kind is in the ledger yet (a plan's estimate only)
OUTPUT_PRIOR = {"arm": 2500, "rec": 30, "lap": 3}


@dataclass(frozen=True)
class Registration:
    """A registry row (raw.hb_registry): what an audit row was measured under."""
    model_key: str
    provider: str
    model_spec: str
    display: str | None = None
    generation: str | None = None
    tier: str | None = None
    sampling: str | None = None
    serving_quantization: str | None = None
    thinking_regime: str | None = None
    retrieval: str = "none"
    parser_version: str | None = None
    vendor_cutoff: str | None = None
    vendor_cutoff_read_on: str | None = None
    serving_variant_of: str | None = None   # the key this row is another serving configuration of


def default_key(spec: str) -> str:
    """The registry key of PROVIDER:MODEL when none is given: the model name, path-safe."""
    return re.sub(r"[^A-Za-z0-9._:-]+", "-", spec.partition(":")[2]).strip("-")


def registered_key(con, spec: str) -> str:
    """The registry key a model was last audited under (batch collection from another process)."""
    row = con.execute("select model_key from raw.hb_registry where model_spec = ? order by registered_at desc limit 1",
                      [spec]).fetchone()
    return row[0] if row else default_key(spec)


def make_auditee(spec: str, base_url: str | None, overrides: Overrides):
    """The provider for an audit: a simulated auditee (sim:audit-…) or a real model."""
    provider, _, name = spec.partition(":")
    if provider == "sim" and name.startswith("audit-"):
        if name not in AUDITEES:
            raise InputError("--model", f"no simulated auditee {name!r}", f"use one of {', '.join('sim:' + k for k in AUDITEES)}")
        return SimulatedAuditee(name)
    return make_provider(spec, base_url, overrides.transport())


TIER_ORDER = list(ROW_TIERS)
# what a row is measured under: a change is a new row version; tier and sampling follow the latest run
CONFIGURATION = ("provider", "model_spec", "display", "generation", "serving_quantization", "thinking_regime", "retrieval",
                 "parser_version", "vendor_cutoff", "vendor_cutoff_read_on")


def register(con, registration: Registration) -> tuple[int, bool]:
    """(row_version, new): the model's registry row. Flags not given keep the registered values; a
    changed configuration (another serving quantization, thinking regime, parser…) is a new row
    version, never an overwrite; a larger tier or new sampling flags update the latest row."""
    if registration.vendor_cutoff and not re.fullmatch(r"\d{4}-\d{2}", registration.vendor_cutoff):
        raise InputError("--vendor-cutoff", f"{registration.vendor_cutoff!r} is not YYYY-MM", "give the vendor's month, e.g. 2025-08")
    if registration.retrieval != "none":
        raise InputError("--retrieval", "the protocol pins retrieval off", "audit with --retrieval none")
    latest = fetch_dicts(con, "select * from raw.hb_registry where model_key = ? order by row_version desc limit 1",
                         [registration.model_key])
    values = {f.name: getattr(registration, f.name) for f in fields(Registration)}
    if latest:
        values = {name: latest[0][name] if value is None else value for name, value in values.items()}
        if all(latest[0][name] == values[name] for name in CONFIGURATION):
            tier = max(latest[0]["tier"], values["tier"], key=lambda t: TIER_ORDER.index(t) if t in TIER_ORDER else -1)
            con.execute("update raw.hb_registry set tier = ?, sampling = ?, serving_variant_of = ? where model_key = ? and row_version = ?",
                        [tier, values["sampling"], values["serving_variant_of"], registration.model_key, latest[0]["row_version"]])
            return latest[0]["row_version"], False
    released = con.execute("select max(row_version) from reference.hb_registry where model_key = ?",
                           [registration.model_key]).fetchone()[0] if _has_seed(con) else None
    version = max(latest[0]["row_version"] if latest else 0, released or 0) + 1
    values.update(row_version=version, registered_at=datetime.now(timezone.utc).replace(tzinfo=None))
    con.execute(f"insert into raw.hb_registry ({', '.join(values)}) values ({', '.join('?' * len(values))})", list(values.values()))
    return version, True


def _has_seed(con) -> bool:
    return bool(con.execute("select count(*) from information_schema.tables where table_schema = 'reference' "
                            "and table_name = 'hb_registry'").fetchone()[0])


def tier_rows(con, tier: str, control: bool = False) -> list[dict]:
    if tier not in TIERS:
        raise InputError("--tier", f"unknown tier {tier!r}", f"use one of {', '.join(TIERS)}")
    require_marts(con, "fct_hb_requests")
    rows = fetch_dicts(con, f"""select * from fct_hb_requests where {TIERS[tier]}{' or in_control' if control else ''}
                                order by kind, decision_date, arm, replicate, sample, probe_set, temperature, request_id""")
    if not rows:
        raise InputError("fct_hb_requests", "no requests: the panel's prompt inputs are not loaded",
                         "run `hindsight load hindsightbench ROOT` on a release with sketch_batch_requests.jsonl, then `hindsight build`")
    return rows


def stored_calls(con, key: str) -> dict[str, str]:
    """{request_id: 'complete' | 'truncated'} of the runner's replies for `key`."""
    return dict(con.execute(f"""select request_id, case when max(case when coalesce(finish_reason, '') not in {TRUNCATED}
                                           and trim(coalesce(reply_text, '')) != '' then 1 else 0 end) = 1
                                           then 'complete' else 'truncated' end
                                from raw.hb_responses where model_key = ? and source = 'runner' group by request_id""",
                            [key]).fetchall())


def plan(con, spec: str, tier: str, key: str, control: bool = False, batch: bool = False) -> list[str]:
    """What `audit run` would ask: calls by kind, arm and replicate; estimated tokens and cost; what
    is already stored."""
    rows = tier_rows(con, tier, control)
    stored = stored_calls(con, key)
    groups: dict[tuple, list[dict]] = {}
    samples: dict[tuple, set] = {}
    for row in rows:
        if row["kind"] == "lap":
            samples.setdefault((row["probe_set"], row["temperature"]), set()).add(row["sample"])
    for row in rows:
        if row["kind"] != "lap":
            label = f"rep {row['replicate']}" if row["replicate"] else ""
        elif row["probe_set"] == "protocol":
            label = f"{len(samples[(row['probe_set'], row['temperature'])])} samples"
        else:       # a re-probe set: its temperature and samples
            taken = samples[(row["probe_set"], row["temperature"])]
            label = f"T {row['temperature']} s{min(taken)}-{max(taken)}"
        groups.setdefault((row["kind"], row["arm"] or "", label), []).append(row)
    means = dict(con.execute("""select replace(purpose, 'hb_', ''), avg(output_tokens) from raw.llm_calls
                                where purpose like 'hb_%' and output_tokens is not null group by purpose""").fetchall())
    price = con.execute(f"""select {'batch_' if batch else ''}input_usd_per_million_tokens,
                                   {'batch_' if batch else ''}output_usd_per_million_tokens
                            from reference.model_prices where model = ?""", [spec]).fetchone() \
        if con.execute("select count(*) from information_schema.tables where table_schema = 'reference' "
                       "and table_name = 'model_prices'").fetchone()[0] else None
    lines = [f"audit plan: {spec} as {key!r}, tier {tier}{' + W72 control' if control else ''}"
             f"{' (batch prices)' if batch else ''}",
             f"  {'kind':5} {'arm':4} {'set':11} {'dates':>5} {'calls':>6} {'stored':>6} {'to ask':>6} {'in tok':>10} {'out tok':>10}"]
    totals = [0, 0, 0, 0.0, 0.0]
    for (kind, arm, label), members in sorted(groups.items()):
        done = sum(r["request_id"] in stored for r in members)
        todo = [r for r in members if r["request_id"] not in stored]      # cut-off replies wait for --retry-truncated
        tokens_in = sum(len(r["system_text"]) + len(r["user_text"]) for r in todo) / 4      # ~4 bytes a token
        tokens_out = len(todo) * (means.get(kind) or OUTPUT_PRIOR[kind])
        lines.append(f"  {kind:5} {arm:4} {label:11} {len({r['decision_date'] for r in members}):>5} {len(members):>6} "
                     f"{done:>6} {len(todo):>6} {tokens_in:>10,.0f} {tokens_out:>10,.0f}")
        for index, value in enumerate((len(members), done, len(todo), tokens_in, tokens_out)):
            totals[index] += value
    cost = "no price for this model in seeds/model_prices.csv" if not price else \
        f"${(totals[3] * price[0] + totals[4] * price[1]) / 1e6:,.2f}"
    lines += [f"  total: {totals[0]:,} calls, {totals[1]:,} stored, {totals[2]:,} to ask; estimated "
              f"{totals[3]:,.0f} input and {totals[4]:,.0f} output tokens, {cost}",
              "  (output tokens: this model's and earlier audits' mean per kind from the ledger, else a prior)"]
    truncated = sum(1 for r in rows if stored.get(r["request_id"]) == "truncated")
    if truncated:
        lines.append(f"  {truncated} stored replies were cut off (no cell); `audit run --retry-truncated --max-tokens N` asks them again")
    return lines


def inspected(con, key: str) -> bool:
    return bool(con.execute("select count(*) from raw.hb_inspections where model_key = ?", [key]).fetchone()[0])


def audit_writer(con, spec: str, key: str):
    """The writer of whole replies to raw.hb_responses (one row per call, never twice): used by the
    direct runner and by batch collection from another process."""
    written = {r[0] for r in con.execute("select call_id from raw.hb_responses where source = 'runner' and call_id is not null").fetchall()}
    load_id: list[int] = []

    def write(cursor, job: Job, completion: Completion) -> str:
        if job.call_id in written:
            return "ok"
        written.add(job.call_id)
        if not load_id:
            load_id.append(register_run(cursor, "hb_audit", spec))
        request = job.context
        cursor.execute("""insert into raw.hb_responses (load_id, model_key, source, kind, arm, decision_date, replicate, sample,
                          request_id, call_id, reply_text, finish_reason, received_at, probe_set, temperature)
                          values (?, ?, 'runner', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", [
            load_id[0], key, request["hb_kind"], request.get("arm"), request["decision_date"], request.get("replicate"),
            request.get("sample", 0), request["request_id"], job.call_id, completion.text, completion.finish_reason,
            datetime.now(timezone.utc).replace(tzinfo=None), request.get("probe_set", "protocol"), request.get("temperature")])
        return "ok"

    return write


def run_audit(con, spec: str, tier: str, key: str, base_url: str | None = None, concurrency: int = 8,
              overrides: Overrides | None = None, control: bool = False, retry_truncated: bool = False,
              limit: int | None = None) -> RunSummary:
    """Ask every call of the tier not asked yet (with `retry_truncated`: only the cut-off ones, anew;
    with `limit`: the tier's first calls in a stable order)."""
    overrides = overrides or Overrides()
    if overrides.samples or overrides.profile:
        raise InputError("--samples" if overrides.samples else "--profile", "an audit's samples and profiles are the protocol's",
                         "leave them to fct_hb_requests (replicates and LAP samples are rows; profiles per kind in dbt_project.yml)")
    rows = tier_rows(con, tier, control)[:limit]
    if tier != "smoke" and not inspected(con, key):
        raise InputError("--tier", f"{key!r} has no inspected smoke tier; the protocol runs {tier} only after it",
                         f"run `hindsight audit run --model {spec} --tier smoke`, look at `hindsight audit inspect --model {spec}` "
                         "and record it with `--accept`")
    provider = make_auditee(spec, base_url, overrides)
    stored = stored_calls(con, key)
    if retry_truncated:
        largest = con.execute("""select max(calls.max_tokens) from raw.hb_responses as replies
                                 inner join raw.llm_calls as calls using (call_id) where replies.model_key = ?""", [key]).fetchone()[0]
        if (overrides.max_tokens or 0) <= (largest or 0):
            raise InputError("--max-tokens", f"cut-off replies ran out at up to {largest} output tokens",
                             f"pass --max-tokens above {largest} with --retry-truncated")
        rows = [row for row in rows if stored.get(row["request_id"]) == "truncated"]
    hidden = {}
    if isinstance(provider, (SimulatedAuditee, SimulatedModel)):
        # a simulator's stand-in for what the data and its memory tell it; never part of a prompt
        if not con.execute("select count(*) from information_schema.tables where table_schema = 'intermediate' "
                           "and table_name = 'int_hb_dates'").fetchone()[0]:
            raise InputError("warehouse", "int_hb_dates (the realized directions a simulated auditee draws on) is not built",
                             "run `hindsight build`")
        hidden = dict(con.execute("select decision_date, realized_direction from intermediate.int_hb_dates").fetchall())
    resolvers = {kind: SettingsResolver(con, profile_kind, overrides) for kind, profile_kind in KINDS.items()}
    jobs = []
    for row in rows:
        context = {"hb_kind": row["kind"], "request_id": row["request_id"], "arm": row["arm"],
                   "decision_date": row["decision_date"], "replicate": row["replicate"], "sample": row["sample"],
                   # a re-probe's temperature is part of what it measures; NULL = the protocol's, as a release stores it
                   "probe_set": row["probe_set"], "temperature": row["temperature"] if row["probe_set"] != "protocol" else None}
        if hidden:
            context["realized_direction"] = hidden.get(row["decision_date"])
        messages = [{"role": "system", "content": row["system_text"]}, {"role": "user", "content": row["user_text"]}]
        # replicates and LAP samples are distinct calls of one prompt: the sample index keeps them apart
        sample = row["replicate"] - 1 if row["kind"] == "arm" else row["sample"]
        jobs.append(Job(f"hb_{row['kind']}", row["request_id"], messages, context, sample=sample,
                        settings=resolvers[row["kind"]](row)))
    if jobs:
        record_sampling(con, key, provider, jobs)
    return run_jobs(con, provider, spec, jobs, overrides.transport(), concurrency, audit_writer(con, spec, key), overrides.batch)


def record_sampling(con, key: str, provider, jobs: list[Job]) -> None:
    """The registry's sampling contract as the model takes it (provider locks verbatim): what each kind
    of call sends, and what was left out and why (seeds/model_capabilities.csv)."""
    parts = []
    for purpose in sorted({job.purpose for job in jobs}):
        sent, notes = provider.arguments(next(job.settings for job in jobs if job.purpose == purpose))
        parts.append(f"{purpose.removeprefix('hb_')}: " + (", ".join(f"{name} {value}" for name, value in sent.items()) or "defaults")
                     + "".join(f" [{note.split(' (seeds/')[0]}]" for note in notes))
    con.execute("""update raw.hb_registry set sampling = ? where model_key = ?
                   and row_version = (select max(row_version) from raw.hb_registry where model_key = ?)""",
                ["; ".join(parts), key, key])
