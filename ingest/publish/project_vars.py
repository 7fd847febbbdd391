"""The dbt vars of dbt_project.yml as a reference (docs/reference/vars.md): each var's default, what
it means (the comment above it in dbt_project.yml, the one place it is written) and the models,
macros and tests that read it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ingest.config import protocol_vars
from ingest.db import PROJECT_DIR

# var('name') or var("name"), and whether the call gives a default of its own
VAR_READ = re.compile(r"""\bvar\(\s*['"]([a-z_0-9]+)['"]\s*(,)?""")
READER_FOLDERS = ("models", "macros", "tests/dbt", "analyses")


@dataclass(frozen=True)
class ProjectVar:
    name: str
    default: object
    meaning: str
    readers: tuple[str, ...]        # model, macro file and test names


def declared_meanings(text: str) -> dict[str, str]:
    """Each var of the `vars:` block of TEXT (dbt_project.yml) with the comment lines above it; a var
    right below another one, no comment or blank line between, shares that one's comment."""
    meanings, comment, previous, inside = {}, [], "", False
    for line in text.splitlines():
        if line.startswith("vars:"):
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            break
        if not inside:
            continue
        stripped = line.strip()
        if not stripped:
            comment, previous = [], ""
        elif line.startswith("  #"):
            comment.append(stripped.lstrip("#").strip())
        elif re.match(r"^  [a-z_0-9]+:", line):
            name = line.split(":")[0].strip()
            meanings[name] = " ".join(comment) if comment else previous
            previous, comment = meanings[name], []
    return meanings


def var_reads(project: Path = PROJECT_DIR) -> dict[str, list[tuple[str, bool]]]:
    """Per var name, each (file, whether that call gives its own default) that reads it."""
    reads: dict[str, list[tuple[str, bool]]] = {}
    for folder in READER_FOLDERS:
        for path in sorted((project / folder).rglob("*")):
            if path.suffix in (".sql", ".py", ".yml"):
                for name, default in VAR_READ.findall(path.read_text(encoding="utf-8")):
                    reads.setdefault(name, []).append((str(path.relative_to(project)), bool(default)))
    return reads


def project_vars() -> list[ProjectVar]:
    """The declared vars (config.protocol_vars), in dbt_project.yml's order."""
    meanings = declared_meanings((PROJECT_DIR / "dbt_project.yml").read_text(encoding="utf-8"))
    reads = var_reads()
    return [ProjectVar(name, default, meanings.get(name, ""),
                       tuple(sorted({Path(file).stem for file, _ in reads.get(name, [])})))
            for name, default in protocol_vars().items()]
