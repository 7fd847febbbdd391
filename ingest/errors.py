"""The one exception type for problems a user can fix, and the one such problem every install can
have: an optional extra of pyproject.toml that a command needs and the base install leaves out
(Spark as the engine, `spark`; Inspect AI's logs, `inspect`). Each such command checks its modules
before it imports them, so a missing extra is one line naming it, never a traceback (the base-install
test, tests/python/test_base_install.py, runs each)."""
from __future__ import annotations

import importlib.util


class InputError(Exception):
    """Bad user input. The message names the file, the line and the fix."""

    def __init__(self, path, message: str, fix: str, line: int | None = None, field: str | None = None):
        self.path, self.line, self.field, self.fix = str(path), line, field, fix
        where = self.path + (f":{line}" if line else "")
        what = f"{field}: {message}" if field else message
        super().__init__(f"{where}: {what}. Fix: {fix}")


EXTRAS = {
    "spark": ("pyspark", "dbt.adapters.spark"),
    "inspect": ("inspect_ai",),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:             # a parent package is missing
        return False


def require_extra(extra: str, command: str) -> None:
    """InputError naming EXTRA when a module of it is not installed; COMMAND says who needs it."""
    missing = [module for module in EXTRAS[extra] if not _installed(module)]
    if missing:
        raise InputError(command, f"needs the {extra!r} extra ({', '.join(missing)} not installed)",
                         f"pip install 'hindsight-warehouse[{extra}]' (in a checkout: pip install -e '.[{extra}]')")
