"""Model providers behind one async `complete(messages, settings)` call, chosen by the prefix of
`--model PREFIX:MODEL` from a registry (registry.py). A new provider is one module in this package
that registers itself; each module here is imported with the package.

Sampling fields follow the model's row in seeds/model_capabilities.csv (which token parameter,
whether a temperature is taken, reasoning effort or extended thinking). Every completion says why it
ended (`finish_reason`: a reply cut off by the token limit is `truncated`) and keeps reasoning or
thinking text apart from the answer text.

| prefix | module | what it calls |
| --- | --- | --- |
| `openai:` | openai_api.py | the openai SDK (chat completions or the Responses API); with a base URL any OpenAI-compatible server |
| `vllm:`, `ollama:`, `llamacpp:` | local_server.py | the same, with the server's own defaults, context window and token counts (local_servers.py) |
| `anthropic:` | anthropic_api.py | the anthropic SDK (messages) |
| `sim:` | simulated.py | a labelled simulator |

SDKs are imported only when their provider is used. Retries with exponential backoff that honour
`retry-after` on 429, 5xx and timeouts are the SDKs' own (`max_retries`), with a per-request
`timeout`. Keys come from the environment and are never stored.
"""
from __future__ import annotations

import importlib
import pkgutil

from ingest.errors import InputError
from ingest.llm.providers.anthropic_api import AnthropicMessages
from ingest.llm.providers.base import TRUNCATED, Completion, Settings, api_key_from_env, base_url_host
from ingest.llm.providers.local_server import LocalChat
from ingest.llm.providers.openai_api import OpenAIChat, OpenAIResponses
from ingest.llm.providers.registry import PROVIDERS, Provider, known_prefixes, lookup, register
from ingest.llm.providers.simulated import SimulatedModel

# every module here registers its providers when imported: a new one is one new module
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["PROVIDERS", "TRUNCATED", "AnthropicMessages", "Completion", "LocalChat", "OpenAIChat", "OpenAIResponses",
           "Provider", "Settings", "SimulatedModel", "api_key_from_env", "base_url_host", "make_provider", "provider_of",
           "register"]


def provider_of(spec: str) -> tuple[str, str]:
    """(provider, model) of PROVIDER:MODEL, or an InputError before anything is written."""
    provider, sep, model = spec.partition(":")
    if not sep or not model:
        raise InputError("--model", f"{spec!r} is not PROVIDER:MODEL",
                         "write e.g. openai:gpt-4.1-mini, anthropic:claude-haiku-4-5, llamacpp:smollm2 or sim:prospective")
    if lookup(provider) is None:
        raise InputError("--model", f"unknown provider {provider!r}", f"use one of {', '.join(known_prefixes())}")
    return provider, model


def make_provider(spec: str, base_url: str | None, settings: Settings) -> Provider:
    provider, model = provider_of(spec)
    if settings.response_format not in ("text", "json_object"):
        raise InputError("--response-format", f"unknown response format {settings.response_format!r}", "use text or json_object")
    if settings.reasoning_effort not in (None, "minimal", "low", "medium", "high"):
        raise InputError("--reasoning-effort", f"unknown effort {settings.reasoning_effort!r}", "use minimal, low, medium or high")
    if settings.samples < 1:
        raise InputError("--samples", f"{settings.samples} samples", "ask at least 1 sample per request")
    if settings.api not in ("chat", "responses"):
        raise InputError("--api", f"unknown API {settings.api!r}", "use chat or responses")
    if settings.api == "responses" and provider != "openai":
        raise InputError("--api", "the Responses API is OpenAI's", "use --api responses with openai:MODEL only")
    return PROVIDERS[provider](model, base_url, settings)
