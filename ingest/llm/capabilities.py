"""How a model takes its sampling settings: seeds/model_capabilities.csv, matched by provider
and model name (never by base URL: proxies and other hosts serve the same models).

OpenAI's reasoning models (the gpt-5 family, the o-series) refuse `max_tokens` and any
temperature but the default with HTTP 400; OpenAI-compatible servers (vLLM, llama.cpp, Ollama)
take `max_tokens`. A setting the model does not take is not sent; the call records what was
sent, and the run summary says what was left out and why.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache

from ingest.db import PROJECT_DIR
from ingest.errors import InputError

SEED = PROJECT_DIR / "seeds" / "model_capabilities.csv"
TOKEN_PARAMETERS = ("max_tokens", "max_completion_tokens")
TEMPERATURE = ("any", "default_only", "none")


@dataclass(frozen=True)
class Capability:
    provider: str
    model_pattern: str
    token_parameter: str
    temperature: str


@lru_cache(maxsize=1)
def _rows() -> tuple[Capability, ...]:
    rows = []
    with SEED.open(newline="", encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            cap = Capability(row["provider"].strip(), row["model_pattern"].strip(), row["token_parameter"].strip(),
                             row["temperature"].strip())
            if cap.token_parameter not in TOKEN_PARAMETERS or cap.temperature not in TEMPERATURE:
                raise InputError(SEED, f"token_parameter {cap.token_parameter!r} / temperature {cap.temperature!r}",
                                 f"use one of {', '.join(TOKEN_PARAMETERS)} and one of {', '.join(TEMPERATURE)}", line=line)
            rows.append(cap)
    return tuple(rows)


def capability(provider: str, model: str) -> Capability:
    """The first row of the seed whose provider and model pattern match."""
    for cap in _rows():
        if cap.provider == provider and fnmatchcase(model.lower(), cap.model_pattern.lower()):
            return cap
    raise InputError(SEED, f"no row for {provider}:{model}", f"add a row for provider {provider} (a `*` pattern catches every model)")


def request_arguments(cap: Capability, model: str, temperature: float | None, max_tokens: int) -> tuple[dict, list[str]]:
    """(the sampling fields to send, notes on what the model does not take and was left out)."""
    arguments, notes = {cap.token_parameter: max_tokens}, []
    if temperature is not None:
        if cap.temperature == "any" or (cap.temperature == "default_only" and temperature == 1):
            arguments["temperature"] = temperature
        else:
            takes = "only its default temperature (1)" if cap.temperature == "default_only" else "no temperature"
            notes.append(f"temperature {temperature:g} not sent: {model} takes {takes} "
                         f"(seeds/model_capabilities.csv, pattern {cap.model_pattern!r}); the provider's default was used")
    return arguments, notes
