"""`python -m ingest.spark.dbt_on_spark DBT_ARGS...`: dbt on Spark, with the project's table functions
(ingest/spark/functions.py) registered in the session it builds with.

Spark keeps Python functions in a session, and dbt-spark's `session` method builds its SQL on the
session of its own process (SparkSession.builder...getOrCreate()), in-process or on a Spark Connect
server. So dbt runs here, in this process: the session is started first with the target's own
parameters (profiles.yml, rendered by dbt), the functions are registered in it, and dbt's
getOrCreate() then finds that session. What a killed build left is cleared first
(ingest/spark/recovery.py). `hindsight build --target spark` runs this; the selection it planned
(HINDSIGHT_SPARK_SCOPE) is built only if the catalog holds every model, else everything is.
"""
from __future__ import annotations

import json
import os
import sys
from argparse import Namespace
from pathlib import Path


def option(args: list[str], name: str, default: str | None = None) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


def session_parameters(profiles_dir: str, target: str) -> dict[str, str]:
    """The server_side_parameters of profiles.yml's TARGET, rendered as dbt renders them (env_var…)."""
    from dbt.config.profile import Profile, read_profile
    from dbt.config.renderer import ProfileRenderer
    from dbt.flags import set_from_args
    from dbt_common.context import set_invocation_context

    set_from_args(Namespace(), None)
    set_invocation_context(os.environ)
    profile = Profile.from_raw_profiles(read_profile(profiles_dir), "hindsight", ProfileRenderer({}),
                                        target_override=target)
    return dict(profile.credentials.server_side_parameters)


def start_session(profiles_dir: str, target: str):
    from pyspark.sql import SparkSession

    from ingest.spark import functions, recovery

    parameters = session_parameters(profiles_dir, target)
    recovery.clear_half_created_metastore(
        recovery.derby_folder(parameters.get(recovery.METASTORE_URL, "")))
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in parameters.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    recovery.clear_killed_build(spark)
    functions.register(spark)
    return spark


def missing_models(spark, manifest: Path) -> list[str]:
    """The models of the last Spark build's manifest that the catalog lacks (all of them, unknown,
    when there is no manifest): a catalog that lost a model must be built whole."""
    try:
        nodes = json.loads(manifest.read_text())["nodes"].values()
    except (OSError, ValueError, KeyError):
        return [f"(no manifest at {manifest})"]
    expected = {(n["schema"], n["alias"]) for n in nodes
                if n["resource_type"] == "model" and n["config"].get("materialized") != "ephemeral"}
    present = set()
    for schema in {schema for schema, _ in expected}:
        try:
            present |= {(schema, row.tableName) for row in spark.sql(f"show tables in `{schema}`").collect()}
        except Exception:                # noqa: BLE001 - the schema is not there: its models are missing
            pass
    return sorted(f"{schema}.{name}" for schema, name in expected - present)


def scoped(args: list[str], spark) -> list[str]:
    """ARGS with the planned selection (HINDSIGHT_SPARK_SCOPE), or as they are when the catalog lacks a model."""
    scope = os.environ.get("HINDSIGHT_SPARK_SCOPE", "").split()
    if not scope:
        return args
    missing = missing_models(spark, Path(os.environ.get("DBT_TARGET_PATH", "target")) / "manifest.json")
    if missing:
        print(f"hindsight: the Spark catalog lacks {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}: "
              "building everything", file=sys.stderr)
        return args
    return [*args, "--select", *scope]


def main(args: list[str]) -> int:
    from dbt.cli.main import dbtRunner

    from ingest.dbt_process import forget_partial_parse_of_changed_twins

    forget_partial_parse_of_changed_twins()
    spark = start_session(option(args, "--profiles-dir", "."), option(args, "--target", "spark"))
    result = dbtRunner().invoke(scoped(args, spark))
    return 0 if result.success else (2 if result.exception is not None else 1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
