"""How a model takes its sampling settings: seeds/model_capabilities.csv, matched by provider
and model name (never by base URL: proxies and other hosts serve the same models).

OpenAI's reasoning models (the gpt-5 family, the o-series) refuse `max_tokens` and any
temperature but the default with HTTP 400 and take a `reasoning_effort`; OpenAI-compatible servers
(vLLM, llama.cpp, Ollama) take `max_tokens`; Anthropic's API version 2026-10-21 (the SDK 2.x
default) refuses temperature, top_p and top_k even at their defaults, and its extended thinking
takes a budget of at least 1,024 tokens below `max_tokens`. A setting the model does not take is
not sent; the call records what was sent, and the run summary says what was left out and why.
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
REASONING = ("effort", "thinking", "none")
MIN_THINKING_BUDGET = 1024      # Anthropic refuses a smaller budget_tokens


@dataclass(frozen=True)
class Capability:
    provider: str
    model_pattern: str
    token_parameter: str
    temperature: str
    reasoning: str = "none"


@lru_cache(maxsize=1)
def _rows() -> tuple[Capability, ...]:
    rows = []
    with SEED.open(newline="", encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            cap = Capability(row["provider"].strip(), row["model_pattern"].strip(), row["token_parameter"].strip(),
                             row["temperature"].strip(), (row.get("reasoning") or "none").strip())
            if cap.token_parameter not in TOKEN_PARAMETERS or cap.temperature not in TEMPERATURE or cap.reasoning not in REASONING:
                raise InputError(SEED, f"token_parameter {cap.token_parameter!r} / temperature {cap.temperature!r} / "
                                 f"reasoning {cap.reasoning!r}", f"use one of {', '.join(TOKEN_PARAMETERS)}, one of "
                                 f"{', '.join(TEMPERATURE)} and one of {', '.join(REASONING)}", line=line)
            rows.append(cap)
    return tuple(rows)


def capability(provider: str, model: str) -> Capability:
    """The first row of the seed whose provider and model pattern match."""
    for cap in _rows():
        if cap.provider == provider and fnmatchcase(model.lower(), cap.model_pattern.lower()):
            return cap
    raise InputError(SEED, f"no row for {provider}:{model}", f"add a row for provider {provider} (a `*` pattern catches every model)")


def request_arguments(cap: Capability, model: str, settings) -> tuple[dict, list[str]]:
    """(the sampling fields to send, in the chat-completions / messages shape, and notes on what the
    model does not take and was left out). A thinking budget the API would refuse is an InputError
    before anything is sent."""
    where = f"(seeds/model_capabilities.csv, pattern {cap.model_pattern!r})"
    arguments, notes = {cap.token_parameter: settings.max_tokens}, []
    thinking = settings.thinking_budget is not None and cap.reasoning == "thinking"
    if settings.thinking_budget is not None and not thinking:
        notes.append(f"thinking budget {settings.thinking_budget} not sent: {model} has no extended thinking {where}")
    if thinking:
        if not MIN_THINKING_BUDGET <= settings.thinking_budget < settings.max_tokens:
            raise InputError("--thinking-budget", f"a thinking budget of {settings.thinking_budget} with {settings.max_tokens} "
                             "output tokens", f"use a budget of at least {MIN_THINKING_BUDGET} tokens and below --max-tokens "
                             "(thinking counts toward the output limit)")
        arguments["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_budget}
    temperature = settings.temperature
    if temperature is not None:
        if thinking and temperature != 1:
            notes.append(f"temperature {temperature:g} not sent: extended thinking takes temperature 1 only; "
                         "the provider's default (1) was used")
        elif cap.temperature == "any" or (cap.temperature == "default_only" and temperature == 1):
            arguments["temperature"] = temperature
        else:
            takes = "only its default temperature (1)" if cap.temperature == "default_only" else "no temperature"
            notes.append(f"temperature {temperature:g} not sent: {model} takes {takes} {where}; the provider's default was used")
    if settings.reasoning_effort is not None:
        if cap.reasoning == "effort":
            arguments["reasoning_effort"] = settings.reasoning_effort
        else:
            notes.append(f"reasoning effort {settings.reasoning_effort!r} not sent: {model} takes none {where}")
    if settings.response_format == "json_object":
        if cap.provider in ("openai", "vllm", "ollama", "llamacpp"):
            arguments["response_format"] = {"type": "json_object"}
        elif cap.provider == "anthropic":
            notes.append(f"JSON mode not sent: {cap.provider} has none (the prompt asks for JSON; the parser reads it)")
    return arguments, notes
