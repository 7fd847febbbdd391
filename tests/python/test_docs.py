"""The documentation: the site builds strictly, its references are generated from the code (and
fail when something public has no description), the version is one, and the README stays short
and true to the command line."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import duckdb
import yaml

from conftest import PROJECT
from ingest.cli import main
from ingest.config import __version__, raw_ddl
from ingest.publish.marts import public_mart_properties

QUIET = {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}


def commands(group: click.Group = main, path: tuple[str, ...] = ()):
    """(path, command) for every command and group of the CLI."""
    for name, command in sorted(group.commands.items()):
        yield path + (name,), command
        if isinstance(command, click.Group):
            yield from commands(command, path + (name,))


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "--site-dir", str(site)],
                          capture_output=True, text=True, cwd=PROJECT, env={**os.environ, **QUIET})


def test_every_public_command_and_option_has_a_description():
    missing = [" ".join(path) for path, command in commands() if not (command.help or "").strip()]
    missing += [f"{' '.join(path)} {param.opts[0]}" for path, command in commands() for param in command.params
                if isinstance(param, click.Option) and not (param.help or "").strip()]
    assert not missing, f"give these a help text (the CLI reference is generated from it): {missing}"


def test_every_public_mart_has_a_grain_a_description_and_described_columns():
    problems = []
    for mart in public_mart_properties():
        config = mart.get("config") or {}
        if not (mart.get("description") or "").strip():
            problems.append(f"{mart['name']}: no description")
        if not ((config.get("meta") or {}).get("grain") or "").strip():
            problems.append(f"{mart['name']}: no meta.grain")
        problems += [f"{mart['name']}.{c['name']}: no description" for c in mart.get("columns", [])
                     if not (c.get("description") or "").strip()]
    assert len(public_mart_properties()) >= 30
    assert not problems, problems


def test_the_site_builds_strictly_with_generated_references(tmp_path):
    done = mkdocs_build(PROJECT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    marts = (tmp_path / "site" / "reference" / "marts" / "index.html").read_text()
    for mart in public_mart_properties():
        assert f'id="{mart["name"]}"' in marts
        for column in mart.get("columns", []):
            assert f"<code>{column['name']}</code>" in marts, (mart["name"], column["name"])
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    for path, _ in commands():
        assert f'id="hindsight-{"-".join(path)}"' in cli, path
    assert "--retry-truncated" in cli and "--vendor-cutoff" in cli
    # every seed and every raw table, with each of its columns, as the CSVs and the DDL have them
    seeds = (tmp_path / "site" / "reference" / "seeds" / "index.html").read_text()
    for csv_file in (PROJECT / "seeds").glob("*.csv"):
        assert f'id="{csv_file.stem}"' in seeds, csv_file.stem
        for column in csv_file.read_text().splitlines()[0].split(","):
            assert f"<code>{column}</code>" in seeds, (csv_file.stem, column)
    raw = (tmp_path / "site" / "reference" / "raw" / "index.html").read_text()
    with duckdb.connect() as con:
        con.execute(raw_ddl())
        for table, column in con.execute("select table_name, column_name from information_schema.columns "
                                         "where table_schema = 'raw'").fetchall():
            assert f'id="{table}"' in raw and f"<code>{column}</code>" in raw, (table, column)


def test_a_broken_link_fails_the_build(tmp_path):
    """--strict is what catches a broken link or a missing page: the same config over a copy of the
    docs with one bad link must fail."""
    shutil.copytree(PROJECT / "docs", tmp_path / "docs")
    page = tmp_path / "docs" / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    config = yaml.safe_load((PROJECT / "mkdocs.yml").read_text().replace("!!python", "#"))
    config["docs_dir"] = str(tmp_path / "docs")
    config["plugins"] = ["search", {"gen-files": {"scripts": [str(PROJECT / "docs" / "gen_reference.py")]}}]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    done = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and "no-such-page.md" in done.stdout + done.stderr


def test_one_version_everywhere():
    project = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["version"]
    dbt_project = yaml.safe_load((PROJECT / "dbt_project.yml").read_text())
    assert __version__ == project, "reinstall (make install): the installed metadata is older than pyproject.toml"
    assert dbt_project["version"] == project and dbt_project["vars"]["warehouse_version"] == project
    done = subprocess.run([sys.executable, "-m", "ingest.cli", "--version"], capture_output=True, text=True, cwd=PROJECT)
    assert done.returncode == 0 and done.stdout.strip() == f"hindsight {project}"
    changelog = (PROJECT / "CHANGELOG.md").read_text()
    assert f"## [{project}] - " in changelog, "CHANGELOG.md has no entry for the version in pyproject.toml"


def _readme_commands() -> list[list[str]]:
    readme = (PROJECT / "README.md").read_text()
    found = []
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", readme, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            for part in re.split(r"\s*(?:&&|;)\s*", line):
                if part.startswith("hindsight "):
                    found.append(shlex.split(part)[1:])
    return found


def test_the_readme_is_short_and_its_commands_exist():
    readme = (PROJECT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert readme.lstrip().startswith("# ") and "make demo" in readme.split("\n\n")[1] + readme.split("\n\n")[2]
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (PROJECT / link).exists(), link
    examples = _readme_commands()
    assert len(examples) >= 5
    for args in examples:
        context = main.make_context("hindsight", list(args), resilient_parsing=True)
        command, rest = main, list(args)
        while isinstance(command, click.Group) and rest and rest[0] in command.commands:
            command = command.commands[rest.pop(0)]
        options = {opt for param in command.params for opt in param.opts}
        unknown = [a.split("=")[0] for a in rest if a.startswith("--") and a.split("=")[0] not in options]
        assert not unknown, (args, unknown)
        assert context is not None
