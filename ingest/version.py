"""The warehouse's release, from the installed package's metadata (pyproject.toml's `version`).

Recorded wherever a result leaves the warehouse: `hindsight --version`, `dim_build.warehouse_version`
(through the dbt var of the same name, which a test keeps equal), the report's footer and every
export's manifest.
"""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("hindsight-warehouse")
except PackageNotFoundError:     # run from a checkout that was never installed
    __version__ = "0+unknown"
