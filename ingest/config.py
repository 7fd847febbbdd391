"""Protocol settings: the `vars` of dbt_project.yml, the one home of every protocol constant.

SQL reads them with var(), the dbt Python models through their config, and Python
through protocol_vars(), so a change in dbt_project.yml (or `--vars` on a build)
reaches every model and command alike.

And the warehouse's release, __version__: the installed package's metadata (pyproject.toml's
`version`), recorded wherever a result leaves the warehouse (`hindsight --version`, the report's
footer, every export's manifest); dim_build records it through the var `warehouse_version`,
which a test keeps equal.
"""
from __future__ import annotations

from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import yaml

from ingest.db import PROJECT_DIR

try:
    __version__ = version("hindsight-warehouse")
except PackageNotFoundError:     # a checkout that was never installed
    __version__ = "0+unknown"


@lru_cache(maxsize=1)
def protocol_vars() -> dict[str, Any]:
    with (PROJECT_DIR / "dbt_project.yml").open(encoding="utf-8") as handle:
        return dict(yaml.safe_load(handle)["vars"])


def protocol_var(name: str) -> Any:
    values = protocol_vars()
    if name not in values:
        raise KeyError(f"dbt_project.yml has no var {name!r}")
    return values[name]
