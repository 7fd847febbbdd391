"""The Spark engine: `hindsight build --target spark` (build.py) and a Spark server from pyspark's
own jars for the tests and the benchmark (server.py). DuckDB stays where data is collected."""
