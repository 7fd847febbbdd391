"""What a BI tool's own Python environment needs to read the serving file.

Superset (and any tool with its own virtual environment) opens the serving file through
duckdb-engine, with the DuckDB it has installed: that must be this project's DuckDB, since a DuckDB
older than the one that wrote a file cannot open it, and pip picks whatever is newest.
"""
from __future__ import annotations

from importlib.metadata import version

# Superset 6.1 and what its own requirements leave out: `superset db upgrade` needs rich, and
# flask-caching 2.3.1 (2.5 passes an argument 6.1's cache does not take); the dashboard import needs cachetools
SUPERSET = ["apache-superset==6.1.0", "rich", "cachetools", "flask-caching==2.3.1"]


def requirements(superset: bool = True) -> str:
    """A requirements file pinning DuckDB and duckdb-engine to the versions installed here, and with
    SUPERSET, Superset 6.1 and everything it needs to import and draw the bundle."""
    lines = [
        "# the serving file's readers: install these into the BI tool's own environment, e.g.",
        "#   hindsight bi requirements > bi-requirements.txt && superset-venv/bin/pip install -r bi-requirements.txt",
        "# DuckDB at this project's version: an older DuckDB cannot open a file a newer one wrote",
        f"duckdb=={version('duckdb')}",
        f"duckdb-engine=={version('duckdb-engine')}",
    ]
    if superset:
        lines += ["# Apache Superset 6.1, and what its own requirements leave out (docs/slicing.md, A ready Superset dashboard)",
                  *SUPERSET]
    return "\n".join(lines) + "\n"
