"""The dbt vars reference (docs/reference/vars.md) is generated from dbt_project.yml; it can only be
whole if every var there says what it means, every var a model reads is declared there (or the call
gives its own default) and every declared var is read."""
from __future__ import annotations

from ingest.publish.project_vars import declared_meanings, project_vars, var_reads


def test_every_var_is_declared_with_its_meaning_and_read():
    declared = {var.name: var for var in project_vars()}
    assert len(declared) > 40
    assert [name for name, var in declared.items() if not var.meaning] == []
    assert [name for name, var in declared.items() if not var.readers] == []
    undeclared = {name: files for name, files in var_reads().items()
                  if name not in declared and not all(has_default for _, has_default in files)}
    assert undeclared == {}, "declare these in dbt_project.yml's vars, with a comment above each"
    assert declared["ci_method"].default == "percentile" and "dim_build" in declared["ci_method"].readers


def test_a_var_takes_the_comment_above_it_or_its_groups():
    text = "\n".join(["name: x", "vars:", "  # one", "  a: 1", "  b: 2", "", "  c: 3", "  # two, over", "  # two lines",
                      "  d:", "    nested: 1", "models:", "  # not a var", "  e: 5"])
    assert declared_meanings(text) == {"a": "one", "b": "one", "c": "", "d": "two, over two lines"}


def test_every_environment_variable_read_is_declared_once_with_its_default():
    """ingest/config.py declares every HINDSIGHT_ variable the code, the macros, the profiles, the
    tests and CI read (docs/reference/environment.md is generated from it), and nothing else."""
    import re

    from conftest import PROJECT
    from ingest.config import ENVIRONMENT
    from ingest.llm.local_servers import KINDS

    token = re.compile(r"\bHINDSIGHT_[A-Z][A-Z0-9_]*[A-Z0-9]\b")
    constant = re.compile(r"^\s*(HINDSIGHT_[A-Z0-9_]+) = ", re.M)      # a Python name (not a keyword argument)
    read, constants = set(), set()
    files = [*PROJECT.glob("ingest/**/*.py"), *PROJECT.glob("macros/*.sql"), *PROJECT.glob("tests/python/*.py"),
             PROJECT / "profiles.yml", PROJECT / "dbt_project.yml", PROJECT / ".ci" / "run", PROJECT / "Makefile"]
    for path in files:
        if path.name in ("config.py", "test_project_vars.py"):
            continue
        text = path.read_text(encoding="utf-8")
        read |= set(token.findall(text))
        constants |= set(constant.findall(text))
    read = (read - constants) | {kind.url_variable for kind in KINDS.values()}
    assert sorted(read - set(ENVIRONMENT)) == [], "declare these in ingest/config.py"
    assert sorted(set(ENVIRONMENT) - read) == [], "nothing reads these: remove them from ingest/config.py"
    assert all(variable.meaning for variable in ENVIRONMENT.values())
    assert ENVIRONMENT["HINDSIGHT_OLLAMA_BASE_URL"].default == KINDS["ollama"].default_base_url
