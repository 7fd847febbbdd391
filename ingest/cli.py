"""The `hindsight` command: a thin layer over the ingest library."""
from __future__ import annotations

import os
import sys
from collections import Counter
from contextlib import closing, contextmanager
from functools import partial
from pathlib import Path

import click

from ingest.collect.connection import run_connection
from ingest.config import __version__
from ingest.db import connect, require_marts, warehouse_path
from ingest.errors import InputError, require_extra
from ingest.serve.snapshots import open_marts


def _fail(error: InputError) -> None:
    click.echo(f"error: {error}", err=True)
    sys.exit(2)


class _Group(click.Group):
    """Any InputError a command lets through (a warehouse held by another process, say) ends in one
    line with the fix, exit 2, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except InputError as error:
            _fail(error)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="hindsight", message="%(prog)s %(version)s")
def main() -> None:
    """Hindsight-bias evaluation warehouse (DuckDB + dbt).

    The warehouse file is $HINDSIGHT_DB (default: warehouse.duckdb in a checkout's root, else in the
    working directory).
    """


@main.group()
def load() -> None:
    """Load cases, questions or responses into the warehouse's raw tables."""


def _tts_option(values: tuple[str, ...]) -> dict[str, Path]:
    sources: dict[str, Path] = {}
    for value in values:
        name, sep, directory = value.partition("=")
        if not sep or not name or not directory:
            raise click.BadParameter(f"{value!r}: write SOURCE=DIR, e.g. H=annotations/manual", param_hint="--tts")
        if name in sources:
            raise click.BadParameter(f"source {name!r} given twice", param_hint="--tts")
        sources[name] = Path(directory)
    return sources


@load.command("cases")
@click.option("--cohort", required=True, help="Cohort name, e.g. sepsis.")
@click.option("--narratives", type=click.Path(path_type=Path), help="Folder of <case_id>[_body].txt narratives.")
@click.option("--tts", "tts", multiple=True, metavar="SOURCE=DIR",
              help="TTS folder of a source (.bsv/.csv/.json/.jsonl); H is the reference source. Repeatable.")
def load_cases_command(cohort: str, narratives: Path | None, tts: tuple[str, ...]) -> None:
    """Load narratives and TTS files of one cohort."""
    from ingest.load.cases import load_cases

    with connect() as con:
        result = load_cases(con, cohort, narratives, _tts_option(tts))
    if not (result.narratives or result.tts_files or result.rejected or result.skipped):
        click.echo(f"nothing new to load: {result.already_loaded} files were already loaded into cohort {cohort!r}")
        return
    click.echo(f"load {result.load_id}: {result.narratives} narratives, {result.tts_files} TTS files "
               f"({result.records} records) loaded into cohort {cohort!r}; {result.already_loaded} files already loaded")
    for path, reason in result.rejected:
        click.echo(f"  rejected whole: {path}: {reason} (its records are counted as rejected_file)")
    if result.skipped:
        click.echo(f"  {len(result.skipped)} files skipped (listed by `hindsight status`)")


def _report_jsonl(result, noun: str) -> None:
    if result.already_loaded:
        click.echo(f"{result.source_file}: already loaded by load {result.load_id}; nothing added")
        return
    click.echo(f"load {result.load_id}: {result.inserted} {noun} added, {result.duplicates} already present, "
               f"{len(result.errors)} rejected")
    for error in result.errors:
        click.echo(f"  error: {error}", err=True)
    if result.errors:
        sys.exit(1)


@load.command("questions")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--cohort", help="Cohort of the questions' cases, when a case_id is loaded in several cohorts.")
def load_questions_command(file: Path, cohort: str | None) -> None:
    """Load generator-schema questions (JSONL, with case_id)."""
    from ingest.load.questions import load_questions

    with connect() as con:
        result = load_questions(con, file, cohort)
    _report_jsonl(result, "questions")


@load.command("responses")
@click.argument("file", type=click.Path(path_type=Path))
def load_responses_command(file: Path) -> None:
    """Load replayed model answers (JSONL)."""
    from ingest.load.responses import load_responses

    with connect() as con:
        result = load_responses(con, file)
    _report_jsonl(result, "responses")


@load.command("judgments")
@click.argument("file", type=click.Path(path_type=Path))
def load_judgments_command(file: Path) -> None:
    """Load free-response judgments made elsewhere (JSONL; another judge pipeline or people), before or after
    the answers they judge: the build matches them."""
    from ingest.load.judgments import load_judgments

    with connect() as con:
        result = load_judgments(con, file)
    if result.inserted:
        click.echo("judgments are matched to their questions and answers by `hindsight build`; "
                   "`hindsight status` lists any it could not match, with the reason")
    _report_jsonl(result, "judgments")


@load.command("inspect")
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--model", help="The model's name in the warehouse (default: inspect:<the log's model>).")
@click.option("--judge", help="Load the log's scores as judgments from another pipeline, named JUDGE (e.g. inspect:gpt-5-grader).")
def load_inspect_command(logs: tuple[Path, ...], model: str | None, judge: str | None) -> None:
    """Load Inspect AI logs (.eval, .json, or a folder) of a task from `hindsight export inspect`: each
    sample x epoch an answer; a sample whose messages are not its request's is rejected."""
    from ingest.llm.inspect_logs import load_inspect_log, log_files

    require_extra("inspect", "hindsight load inspect")
    failed = False
    with connect() as con:
        for path in log_files(list(logs)):
            result = load_inspect_log(con, path, model, judge)
            if result.already_loaded:
                click.echo(f"{result.source_file}: already loaded by load {result.load_id}; nothing added")
                continue
            click.echo(f"load {result.load_id} ({result.model}): {result.answers} answers ({result.truncated} truncated), "
                       f"{result.failed} errored samples kept in raw.llm_calls, {result.judgments} judgments, "
                       f"{result.duplicates} already present, {len(result.errors)} rejected")
            for error in result.errors:
                click.echo(f"  error: {error}", err=True)
            failed |= bool(result.errors)
    click.echo("next: `hindsight build` scores them")
    if failed:
        sys.exit(1)


MODEL_HELP = ("PROVIDER:MODEL: openai:…, anthropic:…, a local server vllm:… | ollama:… | llamacpp:… (OpenAI-compatible, "
              "at its usual address unless --base-url), or a labelled simulator sim:prospective | sim:hindsight@P | sim:noise@P.")


def _run_options(function, model_flag: str = "--model", many: bool = False):
    for option in reversed([
        click.option(model_flag, "model", required=True, multiple=many,
                     help=MODEL_HELP + (" Repeat it to run several models at once." if many else "")),
        click.option("--base-url", help="OpenAI-compatible server (vLLM, llama.cpp, Ollama) or another API endpoint."),
        click.option("--limit", type=int, help="Only the first N matching requests in a stable order (answered or not)."),
        click.option("--concurrency", type=click.IntRange(min=1), multiple=many,
                     help="Calls in flight at once (default: a local server's slots where it says them, else 8)"
                          + ("; once for every model, or once per --model in order." if many else ".")),
        click.option("--context-window", type=int,
                     help="A local server's context size in tokens, where it does not say it (llama-cpp-python's server)."),
        click.option("--profile", help="A seeds/sampling_profiles.csv profile of this request kind instead of the "
                                        "one the requests mart carries (var sampling_profiles)."),
        click.option("--temperature", type=float, help="Sampling temperature (default: the profile's; empty there means the provider's)."),
        click.option("--max-tokens", type=int, help="Output token limit per call, reasoning included (default: the profile's)."),
        click.option("--reasoning-effort", type=click.Choice(["minimal", "low", "medium", "high"]),
                     help="OpenAI reasoning effort, for models that take one (seeds/model_capabilities.csv)."),
        click.option("--thinking-budget", type=int, help="Anthropic extended thinking budget (>= 1024, below --max-tokens; temperature 1)."),
        click.option("--response-format", type=click.Choice(["text", "json_object"]), help="JSON mode where the model takes it."),
        click.option("--samples", type=click.IntRange(min=1), help="Independent calls per request (default: the profile's)."),
        click.option("--timeout", default=120.0, show_default=True, help="Seconds per request attempt."),
        click.option("--max-retries", default=5, show_default=True, help="Retries on 429, 5xx and timeouts (backoff honours retry-after)."),
        click.option("--api", type=click.Choice(["chat", "responses"]), default="chat", show_default=True,
                     help="OpenAI endpoint: chat completions, or the Responses API (for models or hosts that need it)."),
        click.option("--batch", "use_batch", is_flag=True,
                     help="Through the provider's batch API (half price): collect finished batches, submit the calls in none."),
        click.option("--wait", is_flag=True, help="With --batch: poll until every batch is collected (progress on stderr)."),
        click.option("--batch-size", type=click.IntRange(min=1), help="With --batch: requests per batch (default: the provider's limit)."),
        click.option("--poll-interval", default=30.0, show_default=True, help="With --batch --wait: seconds between polls."),
    ]):
        function = option(function)
    return function


RUN_OPTIONS = ("profile", "temperature", "max_tokens", "reasoning_effort", "thinking_budget", "response_format", "samples",
               "timeout", "max_retries", "api", "context_window")


def _overrides(options: dict):
    """The run's flags over the requests' sampling profiles (ingest/llm/profiles.py)."""
    from ingest.llm.batch import BatchOptions
    from ingest.llm.profiles import Overrides

    use_batch, wait, size, interval = (options.pop(name) for name in ("use_batch", "wait", "batch_size", "poll_interval"))
    if (wait or size) and not use_batch:
        raise InputError("--wait/--batch-size", "given without --batch", "add --batch, or drop them for direct calls")
    batch = BatchOptions(wait=wait, size=size, poll_interval=interval) if use_batch else None
    return Overrides(**{name: options.pop(name) for name in RUN_OPTIONS}, batch=batch)


def _models(model: tuple[str, ...] | str, concurrency: tuple[int, ...] | int | None) -> tuple[list[str], list[int | None]]:
    """--model given once or more, with --concurrency once (for all) or once per model."""
    models = list(dict.fromkeys([model] if isinstance(model, str) else model))
    given = [] if concurrency is None else [concurrency] if isinstance(concurrency, int) else list(concurrency)
    if len(given) not in (0, 1, len(models)):
        raise InputError("--concurrency", f"{len(given)} values for {len(models)} models",
                         "give one --concurrency for every model, or one per --model in the same order")
    return models, (given * len(models) if len(given) == 1 else given or [None] * len(models))


def _each_model(run, models: list[str], limits: list[int | None]) -> list[tuple[str, object]]:
    """RUN(model, concurrency) for each model at once, a thread each (each its own run, client and
    event loop); their summaries in order. A failure of one is said after the others end."""
    if len(models) == 1:
        return [(models[0], run(models[0], limits[0]))]
    import threading

    results: dict[str, object] = {}

    def one(spec: str, slots: int | None) -> None:
        try:
            results[spec] = run(spec, slots)
        except BaseException as error:  # noqa: BLE001 - said for its model below
            results[spec] = error

    threads = [threading.Thread(target=one, args=(spec, slots), daemon=True, name=spec) for spec, slots in zip(models, limits)]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.5)         # wakes for Ctrl-C: stored results stay, the next run resumes the rest
    failures = [(spec, error) for spec, error in results.items() if isinstance(error, BaseException)]
    for spec, error in failures:
        click.echo(f"error: {spec}: {error}", err=True)
    if failures:
        sys.exit(2 if all(isinstance(e, InputError) for _, e in failures) else 1)
    return [(spec, results[spec]) for spec in models]


def _report_run(summary, what: str, exit_on_failure: bool = True) -> None:
    local = (f"{summary.overflowed} beyond the context window (context_overflow, not sent), "
             f"{summary.prompt_truncated} answered to a shortened prompt (prompt_truncated, not answers), "
             if summary.overflowed or summary.prompt_truncated else "")
    elsewhere = f"{summary.elsewhere} taken by another run, " if summary.elsewhere else ""
    click.echo(f"{what}: {summary.selected} calls selected, {summary.answered} answered now, {summary.from_cache} already stored, "
               f"{elsewhere}"
               f"{summary.failed} failed, {summary.unparsed} not the expected JSON (kept with their raw text), "
               f"{summary.truncated} truncated at the token limit; {local}"
               f"tokens in {summary.input_tokens}, out {summary.output_tokens} (cost: `hindsight status`)")
    for note in summary.notes:
        click.echo(f"  note: {note}")
    for error in ([] if summary.refused else summary.errors[:5]):     # a refusal is said once, below
        click.echo(f"  failed: {error}", err=True)
    if summary.refused:
        fix = ("pass --api chat" if "--api chat" in summary.refused else
               "set the model's row in seeds/model_capabilities.csv (token_parameter max_completion_tokens or max_tokens; "
               "temperature any, default_only or none) and run again")
        click.echo(f"error: {summary.refused}. Fix: {fix} (the run stopped at the first refusal)", err=True)
    if summary.submitted or summary.in_batches or summary.batches:
        click.echo(f"  batches: {summary.submitted} calls submitted now, {summary.in_batches} already in a live batch; "
                   "`hindsight batches` lists them, `hindsight batches collect` (or this command again) stores what has finished")
        for line in summary.batches:
            click.echo(f"  {line}")
    if (summary.failed or summary.refused) and exit_on_failure:
        sys.exit(1)


@main.command()
@partial(_run_options, many=True)
@click.option("--conditions", help="Comma-separated conditions, e.g. 0,2.1,2.2 (default: all).")
@click.option("--variant", "variants", multiple=True, type=click.Choice(["standard", "warning"]),
              help="Prompt variant(s) to answer (default: both).")
@click.option("--warning-position", type=click.Choice(["start", "end"]), default="end", show_default=True,
              help="Where the warning variant puts the paper's two warning sentences (the paper used both).")
@click.option("--seed", default=0, show_default=True, help="Seed of a simulator's draws.")
@click.option("--retry-truncated", is_flag=True,
              help="Ask again only the samples whose answer ran out of tokens, as new calls (give a larger --max-tokens).")
@click.option("--retry-overflow", is_flag=True,
              help="Send again the requests counted as context_overflow (after raising the server's context).")
@click.option("--label", help="The name the answers are stored and reported under (default: the model, with this run's "
                              "sampling flags in brackets): one per setup, so that setups never mix.")
@click.option("--cases", help="Comma-separated case ids (default: all).")
@click.option("--questions", type=click.IntRange(min=1),
              help="A pilot: only the first N questions selected (by case, then question), each with every request "
                   "the other filters select, so that full/masked pairs are complete.")
def answer(model, base_url, limit, concurrency, conditions, variants, warning_position, seed, retry_truncated, retry_overflow,
           label, cases, questions, **options):
    """Answer each pending row of fct_answer_requests, once per sample (Appendix C prompts). Give --model
    several times to answer with several models at once, each with its own --concurrency (one value for
    all, or one per model in order). The run never holds the warehouse: it reads its requests from
    the published marts and stores its calls in the runs' store, which `hindsight build` brings in."""
    from ingest.llm.answer import answer_requests

    models, limits = _models(model, concurrency)
    if label and len(models) > 1:
        raise InputError("--label", "one label for several models", "answer with one --model per --label")
    overrides = _overrides(options)

    def run(spec: str, slots: int | None):
        with run_connection("answer", spec, sys.argv[1:]) as con:
            return answer_requests(con, spec, base_url, conditions.split(",") if conditions else None,
                                   list(variants) or None, limit, slots, overrides, warning_position, seed,
                                   retry_truncated, label, cases.split(",") if cases else None, questions, retry_overflow)

    summaries = _each_model(run, models, limits)
    for spec, summary in summaries:
        _report_run(summary, summary.label or spec, exit_on_failure=False)
    if any(summary.failed or summary.refused for _, summary in summaries):
        sys.exit(1)


@main.command("judge")
@_run_options
@click.option("--answers-of", "answering", multiple=True, metavar="MODEL",
              help="Judge only the answers of this answering model (its label in the marts); repeatable.")
def judge_command(model, base_url, limit, concurrency, answering, **options):
    """Score free responses with the Appendix C judge prompts (individual, then paired); --limit N
    asks at most N judgments in all. `hindsight build` after scores them."""
    from ingest.llm.judge import judge

    with run_connection("judge", model, sys.argv[1:]) as con:
        summary = judge(con, model, base_url, limit, concurrency, _overrides(options), list(answering) or None)
    _report_run(summary, f"{model} judgments")
    click.echo("next: `hindsight build` scores them")


@main.group()
def generate() -> None:
    """Generate condition-3 synthetic narratives (or questions) with a model."""


@generate.command("questions")
@_run_options
@click.option("--cases", help="Comma-separated case ids (default: every case with a narrative).")
def generate_questions_command(model, base_url, limit, concurrency, cases, **options):
    """Generate 10 questions per case (Appendix C prompt), validate, repair once, load the valid ones."""
    from ingest.llm.question_generator import generate_questions

    path = warehouse_path()
    with run_connection("generate questions", model, sys.argv[1:]) as con:
        # the calls go to the runs' store; the questions they give are a load, into the warehouse
        summary, loaded, failures = generate_questions(
            con, model, path.with_name(path.stem + ".generated"), base_url,
            cases.split(",") if cases else None, concurrency, _overrides(options), warehouse=connect)
    click.echo(f"{model}: {loaded} questions loaded; {len(failures)} problems left after one repair "
               "(raw.rejected_rows, kind generated_questions)")
    _report_run(summary, f"{model} question generation")


@generate.command("narratives")
@_run_options
def generate_narratives_command(model, base_url, limit, concurrency, **options):
    """Write a synthetic narrative for each fct_narrative_requests scope (run it with the answering model)."""
    from ingest.llm.answer import generate_narratives

    with run_connection("generate narratives", model, sys.argv[1:]) as con:
        summary = generate_narratives(con, model, base_url, limit, concurrency, _overrides(options))
    _report_run(summary, f"{model} narratives")
    click.echo("run `hindsight build` so that condition 3.x requests for this model appear")


@load.command("calls")
@click.argument("path", type=click.Path(path_type=Path))
def load_calls_command(path: Path) -> None:
    """Another warehouse's calls (PATH: its file; its runs' store is read beside it), for a team that collects
    on several machines: only what is not stored here is added, so loading it again adds nothing, and a call
    both machines answered keeps one answer. `hindsight build` brings them in."""
    from ingest.collect.merge import load_calls

    merged = load_calls(warehouse_path(), path)
    said = ", ".join(f"{n} {table}" for table, n in merged.added.items() if n) or "nothing new"
    already = sum(merged.already.values())
    both = (f", of which {merged.duplicates} calls both machines answered (the other answer counted as a duplicate)"
            if merged.duplicates else "")
    click.echo(f"load calls {path}: added {said}; {already} rows already stored here{both}. "
               "Run `hindsight build` to bring them in.")


@load.command("hindsightbench")
@click.argument("root", type=click.Path(path_type=Path))
@click.option("--model", "models", multiple=True, help="Model key(s) under hindsight/outputs/bench (default: all).")
def load_hindsightbench_command(root: Path, models: tuple[str, ...]) -> None:
    """Load a HindsightBench release (arm cells, date and LAP probes, panel dates, SPX labels)."""
    from ingest.load.hindsightbench import load_hindsightbench

    with connect() as con:
        result = load_hindsightbench(con, root, list(models) or None)
    click.echo(f"load {result.load_id}: models {', '.join(result.models) or '(none new)'}; {result.cells} cells, "
               f"{result.sketches} sketches, {result.probe_lines} probe lines, {result.quarantined} quarantined; "
               f"already loaded: {', '.join(result.already_loaded) or 'none'}")
    for path in result.ignored:
        click.echo(f"  not used: {path}")


@main.command()
@click.option("--out", type=click.Path(path_type=Path), help="Write FILE.csv and FILE.md (default: leaderboard.csv/.md here).")
@click.option("--check", "frozen", type=click.Path(path_type=Path), help="A frozen bench_rows.csv to check for drift.")
@click.option("--strict", is_flag=True, help="With --check, fail also when a model is in only one of the two.")
@click.option("--live", is_flag=True, help="Read the warehouse itself, not the published snapshot (waits for a running build).")
def leaderboard(out: Path | None, frozen: Path | None, strict: bool, live: bool) -> None:
    """The HindsightBench leaderboard from agg_hb_audit_rows, with an optional drift check."""
    from ingest.publish import leaderboard as board

    with closing(open_marts(warehouse_path(), live)) as con:
        require_marts(con, "agg_hb_audit_rows", "agg_hb_robustness")
        rows = board.rows(con)
    out = out or Path("leaderboard")
    board.write_csv(rows, out.with_suffix(".csv"))
    out.with_suffix(".md").write_text(board.markdown(rows) + f"\n\nWritten by hindsight-warehouse {__version__}.\n")
    click.echo(f"{len(rows)} models -> {out.with_suffix('.csv')}, {out.with_suffix('.md')}")
    if frozen:
        messages, failed = board.check(rows, frozen, strict)
        for message in messages:
            click.echo(f"  {message}")
        click.echo("drift check: " + ("FAILED" if failed else "ok"))
        if failed:
            sys.exit(1)


@main.command()
@click.argument("sql")
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Write the result to a CSV file.")
@click.option("--live", is_flag=True, help="Read the warehouse itself, not the published snapshot (waits for a running build).")
def query(sql: str, csv_path: Path | None, live: bool) -> None:
    """Run a read-only SQL query (checked with sqlglot) on the published marts (the last successful build)."""
    from ingest.publish.query import run_query

    with closing(open_marts(warehouse_path(), live)) as con:
        names, rows = run_query(con, sql, csv_path)
    if csv_path:
        click.echo(f"{len(rows)} rows -> {csv_path}")
        return
    widths = [max([len(str(n))] + [len("" if r[i] is None else str(r[i])) for r in rows[:200]]) for i, n in enumerate(names)]
    click.echo("  ".join(str(n).ljust(w) for n, w in zip(names, widths)).rstrip())
    for row in rows[:200]:
        click.echo("  ".join(("" if v is None else str(v)).ljust(w) for v, w in zip(row, widths)).rstrip())
    click.echo(f"({len(rows)} rows{', first 200 shown' if len(rows) > 200 else ''})")


def _names(value: str | None) -> list[str]:
    return [name.strip() for name in (value or "").split(",") if name.strip()]


@main.command("metrics")
@click.option("--metric", "metric_names", help="Comma-separated metrics: acc, htr, delta_acc, delta_htr, air, hbr.")
@click.option("--by", "by", default="", help="Comma-separated dimensions, e.g. model,condition,question__relpos_band "
              "(`--list` names them). Cells always keep prompt_variant and visibility apart; without cohort the "
              "cohorts are pooled, each resampled within itself.")
@click.option("--where", help="One read-only condition over the dimensions, e.g. \"cohort = 'sepsis'\".")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "parquet", "json"]), default="table", show_default=True,
              help="A table for reading, or CSV, Parquet or JSON (one record per cell) for tools.")
@click.option("--out", type=click.Path(path_type=Path), help="Write to this file (needed for parquet; csv and json print otherwise).")
@click.option("--list", "list_names", is_flag=True, help="List the metrics and dimensions, with their BI expressions.")
@click.option("--timeout", type=click.FloatRange(min=0), default=120, show_default=True,
              help="Stop a slice that runs longer than this many seconds (0: no limit).")
@click.option("--compare", metavar="DIMENSION=A,B",
              help="Each cell as the difference A - B of two models, conditions, prompt variants or visibilities, on the "
                   "questions both answered, with its case-clustered interval by the build's ci_method, its significance "
                   "alone and adjusted across the cells (--adjust), and the rows each arm lost, e.g. --compare model=sim:a,sim:b.")
@click.option("--adjust", type=click.Choice(["holm", "bh"]), default="holm", show_default=True,
              help="With --compare: how significance is adjusted across the cells of each metric's comparison "
                   "(holm: family-wise error; bh: Benjamini-Hochberg false discovery rate). The unadjusted one is kept beside it.")
def metrics_command(metric_names: str | None, by: str, where: str | None, fmt: str, out: Path | None, list_names: bool,
                    timeout: float, compare: str | None, adjust: str) -> None:
    """Any slice of the paper's metrics with its case-clustered interval, from the published snapshot
    (the same estimator and replicates as agg_metrics: the marts' cuts give the marts' numbers)."""
    from ingest.publish.semantic import semantic_layer
    from ingest.publish.slices import check_out, slice_metrics, write_slice

    if list_names:
        layer = semantic_layer()
        click.echo("metrics (sum of the parts over fct_metric_parts rows):")
        for metric in layer.metrics.values():
            click.echo(f"  {metric.name:<10} {metric.label} [{'|'.join(metric.visibilities)}]: {metric.bi_expression()}")
        click.echo("dimensions (--by, --where; the short name works where it is unique):")
        shorts = Counter(d.short for d in layer.dimensions.values())
        for dimension in layer.dimensions.values():
            short = dimension.short if dimension.short != dimension.name and shorts[dimension.short] == 1 else ""
            click.echo(f"  {dimension.name:<32} {short:<20} {dimension.relation}.{dimension.expr}")
        return
    if fmt == "parquet" and not out:
        raise InputError("--format parquet", "a Parquet file needs a path", "add --out slice.parquet")
    check_out(out)
    frame = slice_metrics(_names(metric_names), _names(by), where, timeout=timeout or None, compare=compare, adjust=adjust)
    click.echo(write_slice(frame, fmt, out), nl=False)
    if compare:
        from ingest.publish.compare import left_out
        for line in left_out(frame):
            click.echo(line, err=True)


@main.group(invoke_without_command=True)
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet", show_default=True,
              help="File format: Parquet (the version also in each file's key-value metadata) or CSV with a header.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("export"), show_default=True,
              help="Folder for one file per mart and manifest.json.")
@click.option("--live", is_flag=True, help="Read the warehouse itself, not the published snapshot (waits for a running build).")
@click.pass_context
def export(ctx, fmt: str, out: Path, live: bool) -> None:
    """Write every public mart to DIR as Parquet or CSV (DuckDB COPY; no pyarrow needed); `export raw`: the raw tables."""
    if ctx.invoked_subcommand is not None:
        return
    from ingest.publish.query import export_marts

    with closing(open_marts(warehouse_path(), live)) as con:
        written = export_marts(con, out, fmt)
    click.echo(f"{len(written)} marts and manifest.json (hindsight-warehouse {__version__}) -> {out}")


@export.command("raw")
@click.option("--out", type=click.Path(path_type=Path),
              help="Landing folder (default: $HINDSIGHT_LANDING, else landing/ beside the warehouse).")
def export_raw_command(out: Path | None) -> None:
    """The raw tables as a Parquet landing zone (Hive partitions by load; only what is new is written)."""
    from ingest.publish.landing import default_landing, export_raw

    path = warehouse_path()
    if not path.exists():
        raise InputError(path, "no warehouse yet", "load data first (`hindsight load …` or `hindsight demo`)")
    out = out or default_landing(path)
    with connect(path, read_only=True) as con:
        result = export_raw(con, out)
    click.echo(f"landing zone {out}: {result.partitions} load partitions and {result.snapshots} snapshots written now "
               f"({result.rows} rows; {', '.join(result.tables) or 'no table'}), {result.unchanged} already there")


@export.command("eee")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Folder for data/<benchmark>/<developer>/<model>/.")
@click.option("--model", "models", multiple=True, help="Only this model (agg_metrics.model or an audit row's model_key); repeatable.")
@click.option("--live", is_flag=True, help="Read the warehouse itself, not the published snapshot (waits for a running build).")
def export_eee_command(out: Path, models: tuple[str, ...], live: bool) -> None:
    """Results as Every Eval Ever records: per model, the clinical metrics with their answers, and the
    HindsightBench audit row (`every_eval_ever validate` checks them; docs/interop.md)."""
    from ingest.llm.prompts import JUDGE_INDIVIDUAL
    from ingest.publish.eee import export_eee

    with closing(open_marts(warehouse_path(), live)) as con:
        done = export_eee(con, out, list(models) or None, JUDGE_INDIVIDUAL)
    click.echo(f"{len(done.files)} files: {done.results} results, {done.instances} instance lines"
               f"{f', {done.left_out} results without an estimate left out' if done.left_out else ''} -> {out / 'data'}")


@export.command("inspect")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Folder for hindsight_task.py and its datasets.")
@click.option("--conditions", help="Comma-separated conditions, e.g. 0,2.1,2.2 (default: all but 3.x).")
@click.option("--variant", "variants", multiple=True, type=click.Choice(["standard", "warning"]),
              help="Prompt variant(s) (default: both).")
@click.option("--narrative-model", help="Include the 3.x requests whose synthetic narrative this model wrote.")
@click.option("--warning-position", type=click.Choice(["start", "end"]), default="end", show_default=True,
              help="Where the warning variant puts the paper's two warning sentences.")
def export_inspect_command(out: Path, conditions: str | None, variants: tuple[str, ...], narrative_model: str | None,
                           warning_position: str) -> None:
    """The answer requests as an Inspect AI task: `inspect eval OUT/hindsight_task.py --model …` collects them,
    `hindsight load inspect` loads the log."""
    from ingest.llm.inspect_task import export_inspect

    with connect(warehouse_path(), read_only=True) as con:
        done = export_inspect(con, out, [c.strip() for c in conditions.split(",")] if conditions else None,
                              list(variants) or None, narrative_model, warning_position)
    for name, count in done.tasks.items():
        click.echo(f"task {name}: {count} samples x {done.epochs[name]} epoch(s)")
    if done.skipped_narrative:
        click.echo(f"{done.skipped_narrative} condition 3.x requests left out: name their narratives' writer with --narrative-model")
    click.echo(f"next: inspect eval {done.task_file} --model <provider/model>, then `hindsight load inspect <log>`")


@main.command()
@click.option("--out", type=click.Path(path_type=Path), default=Path("reports"), show_default=True,
              help="Folder for index.html and figures/.")
@click.option("--live", is_flag=True, help="Read the warehouse itself, not the published snapshot (waits for a running build).")
def report(out: Path, live: bool) -> None:
    """Write the static HTML report (both protocols, from the published marts) to OUT/index.html."""
    from ingest.publish.report import write_report

    index = write_report(warehouse_path(), out, live)
    click.echo(f"report: {index.resolve()}")


@main.command(context_settings={"ignore_unknown_options": True})
@click.option("--target", "-t", help="A dbt target of profiles.yml: `spark` exports the new raw loads to the "
              "landing zone and builds every mart on Spark (docs/spark.md); default: the DuckDB warehouse.")
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED)
def build(target: str | None, dbt_args: tuple[str, ...]) -> None:
    """Run `dbt build` on the warehouse: on what was loaded since the last build, or on everything (the
    first build, a changed project, `--all`); other arguments go to dbt."""
    if target == "spark":
        from ingest.spark.build import build_on_spark

        try:
            ok = build_on_spark(list(dbt_args))
        except RuntimeError as error:
            raise click.ClickException(str(error)) from None
        sys.exit(0 if ok else 1)
    from ingest.build import build as run_build

    sys.exit(0 if run_build(extra=(["--target", target] if target else []) + list(dbt_args)) else 1)


@main.command()
def publish() -> None:
    """Publish the warehouse's marts as a snapshot for readers (every successful build does; this is for a
    warehouse built before, or by a `dbt run` that left dim_build out)."""
    from ingest.build import publish as run_publish

    sys.exit(0 if run_publish() else 1)


@main.group()
def validation() -> None:
    """Human validation (paper §3.8, Appendix G): draw the sample, export packets, load assessments."""


@validation.command("sample")
@click.option("--model", required=True, help="PROVIDER:MODEL whose standard-prompt answers give each case's EPS.")
@click.option("--fraction", default=0.10, show_default=True, help="Share of each cohort's cases to draw (at least 2).")
@click.option("--tau", default=0.3, show_default=True, help="Temperature of the weights exp(EPS / tau).")
@click.option("--seed", default=2026, show_default=True, help="Seed of the draw.")
@click.option("--annotators", default="annotator-1,annotator-2,annotator-3,annotator-4", show_default=True,
              help="Four names: the first two assess half 1, the last two half 2.")
@click.option("--simulations", default=100_000, show_default=True, help="Draws behind each inclusion probability.")
def validation_sample(model, fraction, tau, seed, annotators, simulations) -> None:
    """Draw the error-enriched sample of cases and store it as a design."""
    from ingest.stats.validation_design import DesignParams, create_design

    params = DesignParams(model, fraction, tau, seed, tuple(a.strip() for a in annotators.split(",") if a.strip()),
                          simulations)
    with connect() as con:
        known = {r[0] for r in con.execute("select design_id from raw.validation_designs").fetchall()}
        design_id, rows = create_design(con, params)
    drawn = [r for r in rows if r["sampled"]]
    verb = "already stored" if design_id in known else "drawn"
    click.echo(f"design {design_id} {verb}: {len(drawn)} of {len(rows)} cases "
               f"({sum(r['half'] == 1 for r in drawn)} in half 1, {sum(r['half'] == 2 for r in drawn)} in half 2); "
               "next: `hindsight validation export --out DIR`, then `hindsight build`")
    for row in drawn:
        click.echo(f"  {row['cohort']} {row['case_id']}: half {row['half']}, EPS {row['eps']:.3f}, "
                   f"inclusion probability {row['inclusion_probability']:.3f} (± {row['inclusion_probability_se']:.4f})")


@validation.command("export")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Folder for the packets.")
@click.option("--design", help="A design id (default: the newest).")
@click.option("--judge-sample", default=0, show_default=True,
              help="Also a judge-check CSV with up to N judged free-response answers per case.")
def validation_export(out: Path, design: str | None, judge_sample: int) -> None:
    """One CSV and HTML packet per annotator (the CSV is what `validation load` reads)."""
    from ingest.publish.validation_packets import export_packets

    with connect(read_only=True) as con:
        paths = export_packets(con, out, design, judge_sample)
    click.echo(f"{len(paths)} files written to {out}:")
    for path in paths:
        click.echo(f"  {path}")


@validation.command("load")
@click.argument("file", type=click.Path(path_type=Path))
def validation_load(file: Path) -> None:
    """Load an annotator's filled packet CSV (or judge-check CSV); bad rows are reported, the rest load."""
    from ingest.load.annotations import load_annotations

    with connect() as con:
        result = load_annotations(con, file)
    _report_jsonl(result, "annotations")


@main.group()
def audit() -> None:
    """Audit a model with HindsightBench: plan a tier, run it, inspect the smoke tier (hindsightbench.md §3-§7)."""


def _registry_options(function):
    for option in reversed([
        click.option("--tier", type=click.Choice(["smoke", "reduced", "full-1rep", "full", "lap-sensitivity"]), required=True,
                     help="smoke (8 calls) < reduced (3,098) < full-1rep (6,450) < full (7,482); lap-sensitivity: the "
                          "LAP re-probes of the robustness check (15,480 calls: T 0.3 and 0.7, samples 20-39 at T 1.0)."),
        click.option("--key", help="Registry key of the audit row (default: the model name)."),
        click.option("--control", is_flag=True, help="Also the W72 month-preserving control arm (480 calls; E3')."),
        click.option("--display", help="Registry: display name."),
        click.option("--generation", help="Registry: training generation (year)."),
        click.option("--serving-quantization", help="Registry: pin it, E2 is not quant-invariant (a new key: api)."),
        click.option("--thinking-regime", help="Registry: thinking setting, provider locks included."),
        click.option("--retrieval", default="none", show_default=True, help="Registry: the protocol pins retrieval off."),
        click.option("--parser-version", type=click.Choice(["v1", "v2"]), help="Registry: sketch parser (default: the newest)."),
        click.option("--vendor-cutoff", help="Registry: the vendor-stated training cutoff, YYYY-MM."),
        click.option("--vendor-cutoff-read-on", help="Registry: when the vendor documentation was read."),
        click.option("--serving-variant-of", metavar="KEY",
                     help="Registry: the key of the row this is another serving configuration of (agg_hb_serving_stability)."),
    ]):
        function = option(function)
    return function


def _register(con, model: str, key: str | None, tier: str, options: dict) -> str:
    from ingest.llm.hb_audit_runner import Registration, default_key, register
    from ingest.llm.providers import provider_of

    provider_of(model)          # an unknown provider stops here, before a registry row is written

    key = key or default_key(model)
    from ingest.llm.hb_audit_runner import ROW_TIERS

    flags = {name: options.pop(name) for name in ("display", "generation", "serving_quantization", "thinking_regime",
                                                  "retrieval", "parser_version", "vendor_cutoff", "vendor_cutoff_read_on",
                                                  "serving_variant_of")}
    if flags["serving_variant_of"] == key:
        raise InputError("--serving-variant-of", f"{key!r} cannot be a serving variant of itself", "name the reference row's key")
    sampling = ", ".join(f"{flag} {options[flag]}" for flag in ("temperature", "max_tokens", "reasoning_effort", "thinking_budget")
                         if options.get(flag) is not None) or "protocol profiles (hb_arm, hb_date_probe, hb_lap)"
    flags["serving_quantization"] = flags["serving_quantization"] or (None if _registered(con, key) else "api")
    # the re-probes of a sensitivity check do not change the tier the row is measured on
    version, new = register(con, Registration(key, model.partition(":")[0], model, tier=tier if tier in ROW_TIERS else None,
                                              sampling=sampling, **flags))
    if new:
        click.echo(f"registered {key!r} (row version {version}) for {model}")
    return key


def _registered(con, key: str) -> bool:
    return bool(con.execute("select count(*) from raw.hb_registry where model_key = ?", [key]).fetchone()[0])


@audit.command("plan")
@click.option("--model", required=True, help="PROVIDER:MODEL to audit, or a simulated auditee sim:audit-trigger | …")
@_registry_options
@click.option("--batch", "use_batch", is_flag=True, help="Estimate the cost at the batch rate.")
def audit_plan(model, tier, key, control, use_batch, **options):
    """The calls a tier needs, what is stored, estimated tokens and cost; registers a new model."""
    from ingest.llm.hb_audit_runner import plan

    with run_connection("audit plan", model, sys.argv[1:], record=False) as con:
        key = _register(con, model, key, tier, {**options, "temperature": None})
        for line in plan(con, model, tier, key, control, use_batch):
            click.echo(line)


@audit.command("run")
@_run_options
@_registry_options
@click.option("--retry-truncated", is_flag=True, help="Ask again only the replies cut off at the token limit (give a larger --max-tokens).")
def audit_run(model, base_url, limit, concurrency, tier, key, control, retry_truncated, **options):
    """Ask a tier's calls through the runner, exactly once; larger tiers wait for the smoke inspection."""
    from ingest.llm.hb_audit_runner import run_audit

    with run_connection("audit run", model, sys.argv[1:]) as con:
        key = _register(con, model, key, tier, options)
        summary = run_audit(con, model, tier, key, base_url, concurrency, _overrides(options), control, retry_truncated, limit)
    _report_run(summary, f"{model} audit ({tier})")
    click.echo("run `hindsight build`: the replies are parsed and scored into agg_hb_audit_rows")


@audit.command("inspect")
@click.option("--model", required=True, help="PROVIDER:MODEL audited.")
@click.option("--key", help="Registry key (default: the model name).")
@click.option("--accept", is_flag=True, help="Record the inspection (the gate of the larger tiers), without a prompt.")
@click.option("--note", help="With --accept: what the inspection found.")
def audit_inspect(model, key, accept, note):
    """The smoke replies and their parses; --accept records the inspection."""
    from ingest.llm.hb_audit_runner import default_key
    from ingest.publish import hb_inspection

    key = key or default_key(model)
    with run_connection("audit inspect", model, sys.argv[1:], record=False) as con:
        require_marts(con, "fct_hb_requests")
        lines, _, _ = hb_inspection.inspection(con, key)
        for line in lines:
            click.echo(line)
        if accept:
            click.echo(hb_inspection.accept(con, key, note))


@audit.command("compare")
@click.option("--model-a", "key_a", required=True, metavar="KEY", help="Registry key of one serving configuration.")
@click.option("--model-b", "key_b", required=True, metavar="KEY", help="Registry key of the other configuration of the same weights.")
@click.option("--metric", type=click.Choice(["E2", "E3", "E1", "P1"]), default="E2", show_default=True,
              help="The endpoint compared (P1 has no CI: the verdict is then UNDERPOWERED).")
def audit_compare(key_a, key_b, metric):
    """Serving stability of two configurations of one model (BM-2a rule): both estimates, CIs and the verdict."""
    from ingest.publish.serving_check import compare

    with connect(read_only=True) as con:
        _, lines = compare(con, key_a, key_b, metric)
    click.echo("\n".join(lines))


@main.group(invoke_without_command=True)
@click.pass_context
def batches(ctx) -> None:
    """Provider batches (--batch): list them; `collect` stores what has finished, `cancel ID` stops one."""
    if ctx.invoked_subcommand is None:
        from ingest.collect.progress import store_view
        from ingest.status import batch_lines

        with closing(store_view(warehouse_path())) as con:
            click.echo("\n".join(batch_lines(con)))


@batches.command("collect")
@click.option("--wait", is_flag=True, help="Poll until every batch is collected (progress on stderr).")
@click.option("--poll-interval", default=30.0, show_default=True, help="Seconds between polls.")
def batches_collect(wait: bool, poll_interval: float) -> None:
    """Poll every open batch and store the results of those that have ended, exactly once."""
    from ingest.llm.batch import collect_all
    from ingest.llm.batch_writers import writers_for

    with run_connection("batches collect", "(every model)", sys.argv[1:]) as con:
        summary, still_open = collect_all(con, writers_for, wait, poll_interval)
    click.echo(f"batches: {summary.answered} results stored now ({summary.truncated} truncated), {summary.failed} errored "
               f"(pending again); {len(still_open)} batches still open. Run `hindsight build` to score them.")


@batches.command("cancel")
@click.argument("batch")
def batches_cancel(batch: str) -> None:
    """Ask the provider to cancel a batch (its id, or our batch_key); collect it later as usual."""
    from ingest.llm.batch import cancel

    with run_connection("batches cancel", batch, sys.argv[1:], record=False) as con:
        status = cancel(con, batch)
    click.echo(f"{batch}: {status}; `hindsight batches collect` stores what it finished, and the rest is pending again")


@main.group()
def bi() -> None:
    """BI tools on the serving file: what their environment needs (docs/analyst-access.md)."""


@bi.command("requirements")
@click.option("--readers-only", is_flag=True, help="Only the serving file's drivers (DuckDB, duckdb-engine), not Superset.")
def bi_requirements(readers_only: bool) -> None:
    """Print the requirements of a BI tool's own Python environment: DuckDB at this project's version and
    duckdb-engine, and Superset 6.1 with everything it needs to import and draw the dashboard bundle."""
    from ingest.publish.bi import requirements

    click.echo(requirements(superset=not readers_only), nl=False)


@bi.command("superset")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Folder for hindsight_dashboard.zip.")
@click.option("--serving-uri", help="The serving file as Superset sees it (another host, a container), e.g. "
              "duckdb:////data/warehouse.marts.duckdb; default: its path here.")
def bi_superset(out: Path, serving_uri: str | None) -> None:
    """Write a dashboard bundle Superset 6.1 imports: the serving file (read-only), datasets on fct_metric_parts
    (the metrics as Superset metrics), agg_metrics, agg_metrics_by_format and dim_build, charts with intervals and
    native filters (`hindsight bi import` loads it into a running Superset)."""
    from ingest.db import serve_path
    from ingest.publish.superset import database, write_bundle
    from ingest.publish.superset import serving_uri as default_uri

    uri = serving_uri or default_uri(serve_path(warehouse_path()))
    database(uri)                                   # a bad --serving-uri fails before anything is written
    bundle = write_bundle(serve_path(warehouse_path()), out, uri)
    click.echo(f"{bundle} (database: {uri}); load it into a running Superset with "
               f"`hindsight bi import {bundle} --superset http://localhost:8088 --user admin` "
               "(`hindsight bi requirements` lists what Superset's environment needs)")


@bi.command("import")
@click.argument("bundle", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--superset", "url", default="http://localhost:8088", show_default=True, help="The running Superset's address.")
@click.option("--user", default="admin", show_default=True, help="An admin of that Superset.")
@click.option("--password", envvar="SUPERSET_PASSWORD", prompt=True, hide_input=True,
              help="Its password (default: $SUPERSET_PASSWORD, else asked).")
@click.option("--wait", type=click.FloatRange(min=0), default=0, show_default=True,
              help="Seconds to wait for a Superset that is still starting.")
def bi_import(bundle: Path, url: str, user: str, password: str, wait: float) -> None:
    """Import (or update in place) the bundle of `hindsight bi superset` into a running Superset 6.1, through its
    assets API: the database, datasets, metrics, charts and dashboard are all overwritten, their ids kept."""
    from ingest.publish.superset import import_bundle

    click.echo(f"imported: {import_bundle(bundle, url, user, password, wait)} (sign in as {user} to open it)")


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on. Anything but loopback shows the marts to your network: a warning says so.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="The port (0: any free one).")
@click.option("--static", "static_dir", type=click.Path(path_type=Path),
              help="Write the slice (--metric, --by, --where) as a folder of pages that opens from file:// with no server.")
@click.option("--metric", "metric_names", default="delta_htr", show_default=True, help="With --static: the metrics.")
@click.option("--by", default="model,condition", show_default=True, help="With --static: the dimensions.")
@click.option("--where", help="With --static: one condition, as hindsight metrics --where.")
@click.option("--max-pages", type=click.IntRange(min=1), default=500, show_default=True,
              help="With --static: refuse a slice of more pages than this (the slice's size is said before any is written).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Also answer requests for this host name (a reverse proxy's, say); the loopback names and --host's "
                   "own are always answered, any other is refused (DNS rebinding). Repeatable.")
def explore(host: str, port: int, static_dir: Path | None, metric_names: str, by: str, where: str | None, max_pages: int,
            allow_hosts: tuple[str, ...]) -> None:
    """A local web application from any number to the evidence behind it: the metrics of any slice, each cell's
    questions and pairs, a pair as the paper's Figure 2 with both answers, comparisons, cases and the audit rows
    (reads the published snapshot). With --static DIR, a slice of it as files for a supplement or a reviewer."""
    from ingest.explore.app import Explorer
    from ingest.explore.server import LOOPBACK, allowed_hosts, serve

    warehouse = warehouse_path()
    app = Explorer(warehouse, hosts=allowed_hosts(host, allow_hosts))
    app.marts.now()                           # no snapshot yet: one line now, not an error page later
    if static_dir is not None:
        from ingest.explore.static_site import check_folder, estimate, write_static

        check_folder(static_dir)
        size = estimate(app, _names(metric_names), _names(by), where)
        said = (f"the slice: {size['cells']} cells, about {size['pages']:,} pages, {size['bytes'] / 1e6:.0f} MB, "
                f"{size['seconds'] / 60:.0f} min to write" if size["seconds"] >= 90 else
                f"the slice: {size['cells']} cells, about {size['pages']:,} pages, {size['bytes'] / 1e6:.1f} MB")
        if size["pages"] > max_pages:
            raise InputError("--static", f"{said}: over --max-pages {max_pages}",
                             "narrow it with --where (one model and condition: \"model = 'A' and condition = '2.1'\"), "
                             f"or write it all with --max-pages {size['pages'] + 100}")
        click.echo(f"{said}: writing it")
        done = write_static(app, static_dir, _names(metric_names), _names(by), where, max_pages)
        click.echo(f"{done['pages']} pages, {done['bytes'] / 1e6:.1f} MB -> {done['index']} (opens from file://, no server)")
        return
    if host != LOOPBACK:
        click.echo(f"warning: listening on {host}: anyone who can reach it reads the marts, answers and prompts", err=True)
    try:
        server = serve(app, host, port)
    except OSError as error:
        raise InputError(f"--port {port}", f"cannot listen on {host}:{port} ({error.strerror or error})",
                         "stop what uses that port, or give another (--port 0 takes any free one)") from None
    click.echo(f"hindsight explore: http://{host}:{server.server_port}/ (the published snapshot of {warehouse}; Ctrl-C stops it)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@main.command()
def status() -> None:
    """What is loaded, per cohort and source, and what was quarantined."""
    from ingest.collect.ingest import pending
    from ingest.collect.progress import run_lines
    from ingest.db import LOCK_WAIT_ENV
    from ingest.status import status_report

    path = warehouse_path()
    if not path.exists():
        click.echo(f"{path}: no warehouse yet; load data with `hindsight load cases` or run `hindsight demo`")
        return
    live = run_lines(path)           # the runs' store: never waits for the warehouse
    try:
        with _lock_wait(2), connect(path) as con:
            report = status_report(con, path)
            waiting = pending(con, path)
    except InputError as error:
        if "in use by another process" not in str(error):
            raise
        click.echo("\n".join([*live, "", f"the warehouse is busy ({str(error).split('(', 1)[-1].split(')')[0]}): what it holds "
                              f"shows once that ends (a build, a load); {LOCK_WAIT_ENV} waits longer"]))
        return
    waits = ""
    if waiting and any(waiting.values()):
        calls = waiting.get("llm_calls", 0)
        waits = (f"calls the runs stored that no build has brought in yet: {calls} (with {sum(waiting.values()) - calls} "
                 "answers, judgments, narratives and replies); `hindsight build` brings them in")
    click.echo("\n".join([report, "", *live, *([waits] if waits else [])]))


@contextmanager
def _lock_wait(seconds: float):
    """A wait of at most SECONDS for the warehouse in the block (a status should not wait for a build),
    unless HINDSIGHT_LOCK_WAIT asks for another."""
    from ingest.db import LOCK_WAIT_ENV

    before = os.environ.get(LOCK_WAIT_ENV)
    if before is None:
        os.environ[LOCK_WAIT_ENV] = str(seconds)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(LOCK_WAIT_ENV, None)
        else:
            os.environ[LOCK_WAIT_ENV] = before


@main.command()
@click.option("--report-dir", type=click.Path(path_type=Path), default=Path("reports"), show_default=True,
              help="Where the HTML report is written.")
def demo(report_dir: Path) -> None:
    """Build the warehouse from the embedded demo corpus, summarise it and write the report."""
    from ingest.demo.run import run_demo

    sys.exit(run_demo(report_dir))


if __name__ == "__main__":
    main()
