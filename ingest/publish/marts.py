"""The public marts, as dbt declares them: every model under models/marts/ whose
properties say `access: public`. The query allow-list, the export, the report, the
docs' marts reference and the tests read this declaration; no copy of it is kept
anywhere else."""
from __future__ import annotations

import re
from functools import lru_cache

import yaml

from ingest.db import PROJECT_DIR

MARTS_DIR = PROJECT_DIR / "models" / "marts"
SINGULAR_TESTS_DIR = PROJECT_DIR / "tests" / "dbt"
# libyaml's parser where PyYAML has it: the pure-Python one took 0.7 s of every report
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=1)
def public_mart_properties() -> tuple[dict, ...]:
    """Each public mart's dbt properties (description, config, columns, tests), in folder then
    declaration order, with `folder` and the names of its `unit_tests` added."""
    marts = []
    for path in sorted(MARTS_DIR.rglob("*.yml")):
        properties = yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER) or {}
        unit_tests = properties.get("unit_tests") or []
        for model in properties.get("models", []):
            access = model.get("access") or (model.get("config") or {}).get("access")
            if access == "public":
                marts.append({**model, "folder": path.parent.name,
                              "unit_tests": [t["name"] for t in unit_tests if t.get("model") == model["name"]]})
    return tuple(marts)


@lru_cache(maxsize=1)
def public_marts() -> tuple[str, ...]:
    """Names of the public marts, in folder then declaration order."""
    return tuple(mart["name"] for mart in public_mart_properties())


def singular_tests_of(mart: str) -> list[str]:
    """The singular tests (tests/dbt/*.sql) that read the mart."""
    pattern = re.compile(r"ref\(\s*['\"]" + re.escape(mart) + r"['\"]\s*\)")
    return sorted(path.stem for path in SINGULAR_TESTS_DIR.glob("*.sql") if pattern.search(path.read_text(encoding="utf-8")))
