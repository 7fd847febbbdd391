"""What a BI tool's own Python environment needs to read the serving file.

Superset (and any tool with its own virtual environment) opens the serving file through
duckdb-engine, with the DuckDB it has installed: that must be this project's DuckDB, since a DuckDB
older than the one that wrote a file cannot open it, and pip picks whatever is newest.
"""
from __future__ import annotations

from importlib.metadata import version

# what Superset 6.1's own environment needs besides the readers' pins (its requirements leave these out)
SUPERSET = ["apache-superset==6.1.0", "rich", "cachetools", "flask-caching==2.3.1"]


def requirements() -> str:
    """A requirements file pinning DuckDB and duckdb-engine to the versions installed here."""
    return "\n".join([
        "# the serving file's readers: install these into the BI tool's environment, e.g.",
        "#   hindsight bi requirements > bi-requirements.txt && /path/to/superset-venv/bin/pip install -r bi-requirements.txt",
        "# DuckDB at this project's version: an older DuckDB cannot open a file a newer one wrote",
        f"duckdb=={version('duckdb')}",
        f"duckdb-engine=={version('duckdb-engine')}",
    ]) + "\n"
