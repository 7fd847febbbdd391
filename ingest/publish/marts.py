"""The public marts, as dbt declares them: every model under models/marts/ whose
properties say `access: public`. The query allow-list, the export, the report and
the tests read this list; no copy of it is kept anywhere else."""
from __future__ import annotations

from functools import lru_cache

import yaml

from ingest.db import PROJECT_DIR

MARTS_DIR = PROJECT_DIR / "models" / "marts"
# libyaml's parser where PyYAML has it: the pure-Python one took 0.7 s of every report
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=1)
def public_marts() -> tuple[str, ...]:
    """Names of the public marts, in folder then declaration order."""
    names = []
    for path in sorted(MARTS_DIR.rglob("*.yml")):
        for model in (yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER) or {}).get("models", []):
            access = model.get("access") or (model.get("config") or {}).get("access")
            if access == "public":
                names.append(model["name"])
    return tuple(names)
