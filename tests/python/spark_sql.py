"""Run SQL statements on a Spark Connect server: `python spark_sql.py sc://host:port STATEMENT...`.

Its own process, as spark_marts.py is: a Spark Connect client marks the whole Python process as
connect-only."""
from __future__ import annotations

import sys

from pyspark.sql import SparkSession


def main(where: str, statements: list[str]) -> None:
    session = SparkSession.builder.remote(where).getOrCreate()
    for statement in statements:
        session.sql(statement).collect()
    session.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
