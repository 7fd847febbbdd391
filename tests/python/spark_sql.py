"""Run SQL statements on a Spark Connect server: `python spark_sql.py sc://host:port STATEMENT...`.

Its own process, as spark_marts.py is: a Spark Connect client marks the whole Python process as
connect-only."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_spark_sql(server, *statements: str) -> str:
    """Run STATEMENTS on a Connect SERVER from a process of their own; what the last one returned."""
    done = subprocess.run([sys.executable, __file__, server.url, *statements], capture_output=True, text=True,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def main(where: str, statements: list[str]) -> None:
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(where).getOrCreate()
    rows = []
    for statement in statements:
        rows = session.sql(statement).collect()
    print("\n".join("\t".join(map(str, row)) for row in rows))
    session.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
