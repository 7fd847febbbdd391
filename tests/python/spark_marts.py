"""Read marts from Spark into Parquet files: `python spark_marts.py WHERE OUT NAME...`, WHERE a Spark
Connect server (sc://host:port) or the folder of an in-process build's catalog (HINDSIGHT_SPARK_WAREHOUSE).

Run as its own process by test_spark_engine.py: a Spark Connect client marks the whole Python process
as connect-only, which the in-process Spark session of test_spark_macros.py must not inherit."""
from __future__ import annotations

import sys
from pathlib import Path

from pyspark.sql import SparkSession


def main(where: str, out: str, names: list[str]) -> None:
    if where.startswith("sc://"):
        session = SparkSession.builder.remote(where).getOrCreate()
    else:
        from ingest.spark.server import catalog_settings
        builder = SparkSession.builder.master("local[1]").enableHiveSupport()
        for key, value in catalog_settings(Path(where), memory="2g").items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        relation = name if "." in name else f"main.{name}"
        frame = session.sql(f"select * from {relation}").toPandas()
        frame.attrs = {}                # the connect client's plan metrics, which Parquet metadata cannot hold
        frame.to_parquet(folder / f"{name.replace('.', '__')}.parquet")
    session.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
