"""`hindsight export inspect`: the answer requests as an Inspect AI task, so any Inspect provider
collects them (`inspect eval DIR/hindsight_task.py --model …`), and `hindsight load inspect`
brings the log back (ingest/llm/inspect_logs.py).

One Inspect sample per fct_answer_requests row: its id is the request_id, its input the exact
messages the runner would send (ingest/llm/prompts.py), its metadata the request's identity. The
task's only solver is `generate()`, it has no scorer (the warehouse parses and scores the
answers), and a request's `samples` are the task's epochs. Requests of different sampling profiles
become different tasks, each with its profile's generation settings. Writing needs no inspect_ai.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ingest.db import fetch_dicts, require_marts
from ingest.errors import InputError
from ingest.llm.answer import request_filter
from ingest.llm.prompts import PROMPT_TEMPLATE_VERSION, answer_messages

TASK_FILE = "hindsight_task.py"
# the request's identity and the question's visible fields, in every sample's metadata
METADATA = ("request_id", "question_id", "case_id", "cohort", "condition", "visibility", "prompt_variant", "format",
            "narrative_model", "sampling_profile")


@dataclass
class InspectExport:
    task_file: Path
    tasks: dict[str, int] = field(default_factory=dict)     # task name -> samples in its dataset
    epochs: dict[str, int] = field(default_factory=dict)    # task name -> epochs (the profile's samples)
    skipped_narrative: int = 0                              # 3.x requests left out: no --narrative-model


def sample_of(row: dict, warning_position: str) -> dict:
    """One Inspect sample (the JSON a `json_dataset` reads) for one request row."""
    metadata = {key: row[key] for key in METADATA}
    metadata.update(warning_position=warning_position if row["prompt_variant"] == "warning" else None,
                    prompt_template_version=PROMPT_TEMPLATE_VERSION)
    return {"id": row["request_id"], "input": answer_messages(row, warning_position), "target": "", "metadata": metadata}


def _task_name(profile: str, several: bool) -> str:
    return "hindsight_answers" + (f"_{''.join(c if c.isalnum() else '_' for c in profile)}" if several else "")


def _task_source(tasks: list[dict]) -> str:
    """The task file: one @task per sampling profile, reading its dataset beside the file."""
    lines = [
        '"""Inspect AI tasks written by `hindsight export inspect` (docs/interop.md). Do not edit: the',
        "warehouse checks that every sample's messages are the request's (`hindsight load inspect`).",
        '"""',
        "from pathlib import Path",
        "",
        "from inspect_ai import Task, task",
        "from inspect_ai.dataset import json_dataset",
        "from inspect_ai.model import GenerateConfig",
        "from inspect_ai.solver import generate",
        "",
        "HERE = Path(__file__).parent",
    ]
    for spec in tasks:
        lines += ["", "", "@task", f"def {spec['name']}():",
                  f"    # sampling profile {spec['profile']!r}: {spec['samples']} sample(s) per request as epochs",
                  "    return Task(",
                  f"        dataset=json_dataset(str(HERE / {spec['dataset']!r})),",
                  "        solver=generate(),",
                  f"        epochs={spec['samples']},",
                  f"        config=GenerateConfig({', '.join(f'{k}={v!r}' for k, v in spec['config'].items())}),",
                  f"        metadata={spec['metadata']!r},",
                  "    )"]
    return "\n".join(lines) + "\n"


def _generate_config(row: dict) -> dict:
    """Inspect's GenerateConfig of a profile (JSON mode has no provider-neutral setting: the prompt asks for JSON)."""
    config = {"max_tokens": int(row["max_output_tokens"])}
    if row["temperature"] is not None:
        config["temperature"] = float(row["temperature"])
    if row["reasoning_effort"]:
        config["reasoning_effort"] = row["reasoning_effort"]
    if row["thinking_budget"] is not None:
        config["reasoning_tokens"] = int(row["thinking_budget"])
    return config


def export_inspect(con, out: Path, conditions: list[str] | None = None, variants: list[str] | None = None,
                   narrative_model: str | None = None, warning_position: str = "end") -> InspectExport:
    """Write OUT/hindsight_task.py and one dataset per sampling profile; returns what was written."""
    require_marts(con, "fct_answer_requests")
    where, params = request_filter(conditions, variants)
    selected = fetch_dicts(con, f"select * from fct_answer_requests as r where {' and '.join(['true', *where])} "
                                "order by request_id", params)
    # a 3.x request shows the narrative its answering model wrote: only the named writer's are asked
    rows = [row for row in selected if row["narrative_model"] in (None, narrative_model)]
    if not rows:
        raise InputError("fct_answer_requests", "no request matches the conditions and variants given",
                         "check --conditions and --variant against `hindsight status`, or run `hindsight build`")
    skipped = 0 if narrative_model else len(selected) - len(rows)
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        key = (row["sampling_profile"], row["temperature"], row["max_output_tokens"], row["reasoning_effort"],
               row["thinking_budget"], row["samples"])
        groups.setdefault(key, []).append(row)
    out.mkdir(parents=True, exist_ok=True)
    result, tasks = InspectExport(out / TASK_FILE, skipped_narrative=skipped), []
    for members in groups.values():
        first = members[0]
        name = _task_name(first["sampling_profile"], len(groups) > 1)
        dataset = f"{name}.jsonl"
        with open(out / dataset, "w", encoding="utf-8") as handle:
            for row in members:
                handle.write(json.dumps(sample_of(row, warning_position), ensure_ascii=False) + "\n")
        tasks.append({"name": name, "profile": first["sampling_profile"], "dataset": dataset,
                      "samples": int(first["samples"] or 1), "config": _generate_config(first),
                      "metadata": {"hindsight_prompt_template_version": PROMPT_TEMPLATE_VERSION,
                                   "hindsight_sampling_profile": first["sampling_profile"],
                                   "hindsight_response_format": first["response_format"] or "text",
                                   "hindsight_warning_position": warning_position}})
        result.tasks[name], result.epochs[name] = len(members), int(first["samples"] or 1)
    result.task_file.write_text(_task_source(tasks), encoding="utf-8")
    return result
