"""dbt in a child process that loads the project while `hindsight build` plans the build.

Before dbt runs a node it imports itself and parses the project: 2 s with a partial parse, 4.5 s
with a full one (12-02). The CLI's plan
(the raw tables' signatures, what changed) takes 1-2 s at 100x the paper's cases. So the child
starts first, imports dbt and runs `dbt parse` (which never opens the warehouse), then waits on its
stdin for the build's arguments, which it runs with the manifest it already holds: the two overlap
instead of adding up. The CLI sends the arguments only after it has closed its own connection
(DuckDB allows one writing process per file).

The parsed manifest serves only a build whose parse-relevant flags (PARSE_FLAGS) are the ones it was
parsed with; any other build parses again, as plain `dbt build` would.

dbt's partial parse (target/partial_parse.msgpack) is shared with a plain `dbt build` in the same
shell: see warehouse_env; and dropped when an engine's twin of a model changed: see
forget_partial_parse_of_changed_twins.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from ingest.config import IS_CHECKOUT
from ingest.db import PROJECT_DIR, dbt_write_paths, in_use, warehouse_path

# the flags that change what `dbt parse` produces (the rendered vars, the profile and target)
PARSE_FLAGS = ("--vars", "--target", "-t", "--profile")
COMMON = ["--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR)]


def parse_flags(args: list[str]) -> list[str]:
    """The PARSE_FLAGS among ARGS, with their values (`--vars V` and `--vars=V` alike), in order."""
    kept = []
    for at, arg in enumerate(args):
        name = arg.split("=", 1)[0]
        if name in PARSE_FLAGS:
            kept += [name, arg.split("=", 1)[1]] if "=" in arg else [name, *args[at + 1:at + 2]]
    return kept


class DbtProcess:
    """A dbt child started ahead of the build: `build(args)` runs it, `cancel()` stops it unused."""

    def __init__(self, db, flags: list[str]):
        env = dict(os.environ, DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="false", **warehouse_env(Path(db)),
                   **dbt_write_paths(Path(db)))
        self._child = subprocess.Popen([sys.executable, "-m", "ingest.dbt_process", json.dumps(flags)],
                                       stdin=subprocess.PIPE, text=True, env=env, cwd=PROJECT_DIR)

    def build(self, args: list[str]) -> bool:
        """Run `dbt ARGS` in the child (after the caller closed its connection); True when it passed."""
        try:
            self._child.stdin.write(json.dumps(args) + "\n")
            self._child.stdin.close()
        except BrokenPipeError:
            pass                            # the child died while parsing: its exit code says so
        return self._child.wait() == 0

    def cancel(self) -> None:
        """Stop a child that will not build (a dbt killed while writing its parse state reparses next time)."""
        self._child.terminate()
        self._child.wait()

    def __enter__(self) -> DbtProcess:
        return self

    def __exit__(self, *exc) -> None:
        if self._child.poll() is None:      # an error before build(): the child must not outlive the CLI
            self.cancel()


@contextlib.contextmanager
def silenced():
    """Standard output and error sent to /dev/null at the descriptor level, as dbt's handlers hold the streams."""
    saved = {}
    with open(os.devnull, "w") as null:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
            saved[stream] = os.dup(stream.fileno())
            os.dup2(null.fileno(), stream.fileno())
    try:
        yield
    finally:
        for stream, copy in saved.items():
            stream.flush()
            os.dup2(copy, stream.fileno())
            os.close(copy)


def warehouse_env(db: Path) -> dict[str, str]:
    """HINDSIGHT_DB for the dbt child, as the user's own shell gives it to a plain `dbt build`: unchanged
    where it names DB (unset, in a checkout, for the default warehouse). dbt keeps its partial parse
    only while the rendered profile is the same, the warehouse's path included ("Unable to do partial
    parsing because profile has changed": 5 to 32 s), so the two then share one parse state and a
    plain `dbt build` after `hindsight build` parses nothing again, and the other way round."""
    value = os.environ.get("HINDSIGHT_DB")
    # the child runs in the project root: a relative path means the same file there only from there
    same_place = Path(value or ".").expanduser().is_absolute() or Path.cwd().resolve() == PROJECT_DIR.resolve()
    if value and same_place and Path(value).expanduser().resolve() == db.resolve():
        return {}
    if not value and IS_CHECKOUT and db.resolve() == (PROJECT_DIR / "warehouse.duckdb").resolve():
        return {}                           # profiles.yml's default, relative to the project root the child runs in
    return {"HINDSIGHT_DB": str(db)}


def twin_models(models: Path = PROJECT_DIR / "models") -> list[Path]:
    """The model files that share their name with another: one engine's version of a model and the
    other's (a DuckDB Python model and the SQL model Spark runs instead), one of them disabled."""
    by_name: dict[str, list[Path]] = defaultdict(list)
    for path in models.rglob("*"):
        if path.suffix in (".sql", ".py"):
            by_name[path.stem].append(path)
    return sorted(path for paths in by_name.values() if len(paths) > 1 for path in paths)


def forget_partial_parse_of_changed_twins(target: Path | None = None, models: Path = PROJECT_DIR / "models") -> bool:
    """Delete dbt's partial parse when a twin model changed since it was written (True when it did).
    dbt 1.11's partial parse, given a changed disabled twin, also drops the enabled model of that name,
    and the next command fails "'model.hindsight.…' depends on '…' which is not in the graph" until a
    full parse: after an upgrade of the project, or an edit of a Spark twin. The twins' contents are
    recorded beside the parse state (TARGET/hindsight_twins.sha256)."""
    target = target or Path(os.environ.get("DBT_TARGET_PATH") or PROJECT_DIR / "target")
    digest = hashlib.sha256()
    for path in twin_models(models):
        digest.update(str(path.relative_to(models)).encode() + b"\0" + path.read_bytes() + b"\0")
    state, record = target / "partial_parse.msgpack", target / "hindsight_twins.sha256"
    stale = state.exists() and (not record.exists() or record.read_text() != digest.hexdigest())
    if stale:
        state.unlink()
    target.mkdir(parents=True, exist_ok=True)
    record.write_text(digest.hexdigest())
    return stale


def refusal(args: list[str], exception: BaseException) -> str:
    """dbt's exception before it ran anything, said once as the CLI says its own errors: the warehouse
    held by another writer (after the project's plugin waited for it), or arguments dbt refused (an
    unknown flag, a bad --vars), which dbtRunner reports only through its result."""
    text = " ".join(str(exception).split()).rstrip(".")
    if "in use by another process" in text:
        return text[text.index(str(warehouse_path())):] if str(warehouse_path()) in text else text
    if "could not set lock" in text.lower():
        return str(in_use(warehouse_path(), exception))
    return (f"dbt {' '.join(args[:1])}: {text}. Fix: check the arguments after `hindsight build` (they go to "
            "`dbt build`; `dbt build --help` lists them)")


def main() -> int:
    flags = json.loads(sys.argv[1])
    from dbt.cli.main import dbtRunner

    forget_partial_parse_of_changed_twins()

    # no manifest.json: the build writes it. Silenced (dbt prints some errors whatever the log level): a project or flags that do not parse
    # are reported once, by the build that parses again
    with silenced():
        parsed = dbtRunner().invoke(["parse", "--log-level", "none", "--no-write-json", *flags, *COMMON])
    line = sys.stdin.readline()
    if not line:
        return 1                            # cancelled
    args = json.loads(line)
    manifest = parsed.result if parsed.success and parse_flags(args) == flags else None
    result = dbtRunner(manifest=manifest).invoke([*args, *COMMON])
    if result.exception is not None:
        print(f"error: {refusal(args, result.exception)}", file=sys.stderr)
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main())
