"""The `hindsight` command: a thin layer over the ingest library."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ingest.db import connect, warehouse_path
from ingest.errors import InputError


def _fail(error: InputError) -> None:
    click.echo(f"error: {error}", err=True)
    sys.exit(2)


@click.group()
def main() -> None:
    """Hindsight-bias evaluation warehouse (DuckDB + dbt).

    The warehouse file is $HINDSIGHT_DB (default: warehouse.duckdb in the project root).
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
    from ingest.load_cases import load_cases

    try:
        with connect() as con:
            result = load_cases(con, cohort, narratives, _tts_option(tts))
    except InputError as error:
        _fail(error)
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
    from ingest.load_questions import load_questions

    try:
        with connect() as con:
            result = load_questions(con, file, cohort)
    except InputError as error:
        _fail(error)
    _report_jsonl(result, "questions")


@load.command("responses")
@click.argument("file", type=click.Path(path_type=Path))
def load_responses_command(file: Path) -> None:
    """Load replayed model answers (JSONL)."""
    from ingest.load_responses import load_responses

    try:
        with connect() as con:
            result = load_responses(con, file)
    except InputError as error:
        _fail(error)
    _report_jsonl(result, "responses")


@main.command()
@click.option("--model", "model", required=True, help="sim:prospective | sim:hindsight@P | sim:noise@P")
@click.option("--seed", default=0, show_default=True, help="Seed of the simulator's draws.")
@click.option("--conditions", help="Comma-separated conditions to answer (default: all requested).")
@click.option("--variant", "variants", multiple=True, type=click.Choice(["standard", "warning"]),
              help="Prompt variants to answer (default: both).")
def simulate(model: str, seed: int, conditions: str | None, variants: tuple[str, ...]) -> None:
    """Answer the requests mart with a labelled simulated responder (for demos and estimator checks)."""
    from ingest.simulate import simulate_answers, write_narratives
    from ingest.simulators import Simulator

    try:
        simulator = Simulator.parse(model)
        with connect() as con:
            written = write_narratives(con, simulator)
            result = simulate_answers(con, simulator, simulated_dir(), seed,
                                      conditions.split(",") if conditions else None, list(variants) or None)
    except InputError as error:
        _fail(error)
    click.echo(f"{simulator.name}: {result.inserted} answers added, {result.duplicates} already present")
    if written:
        click.echo(f"{written} synthetic narratives written: run `hindsight build`, then this command again "
                   "to answer conditions 3.x")


def simulated_dir() -> Path:
    path = warehouse_path()
    return path.with_name(path.stem + ".simulated")


@main.command(context_settings={"ignore_unknown_options": True})
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED)
def build(dbt_args: tuple[str, ...]) -> None:
    """Run `dbt build` on the warehouse (extra arguments go to dbt)."""
    from ingest.build import build as run_build

    sys.exit(0 if run_build(extra=list(dbt_args)) else 1)


@main.command()
def status() -> None:
    """What is loaded, per cohort and source, and what was quarantined."""
    from ingest.status import status_report

    path = warehouse_path()
    if not path.exists():
        click.echo(f"{path}: no warehouse yet; load data with `hindsight load cases` or run `hindsight demo`")
        return
    with connect(path) as con:
        click.echo(status_report(con, path))


@main.command()
def demo() -> None:
    """Build the warehouse from the embedded demo corpus and summarise it."""
    from ingest.demo import run_demo

    sys.exit(run_demo())


if __name__ == "__main__":
    main()
