"""What every provider shares: the completion it returns, the settings it is called with, and the
bases of the SDK clients (sampling fields from seeds/model_capabilities.csv; the key from the
environment, the SDK's own retries with backoff, a timeout per attempt)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlparse

from ingest.errors import InputError
from ingest.llm.capabilities import capability, request_arguments

# why a reply ended on the output token limit, as each API says it
TRUNCATED = {"length", "max_tokens", "max_output_tokens"}


@dataclass
class Completion:
    text: str
    reported_model: str | None
    input_tokens: int | None
    output_tokens: int | None
    finish_reason: str | None = None
    reasoning_text: str | None = None       # thinking blocks / reasoning summaries, never part of `text`
    sent_max_tokens: int | None = None      # the completion budget sent, when capped to fit the context window

    @property
    def truncated(self) -> bool:
        return self.finish_reason in TRUNCATED


@dataclass(frozen=True)
class Settings:
    temperature: float | None = None
    max_tokens: int = 1024
    timeout: float = 120.0
    max_retries: int = 5
    api: str = "chat"           # OpenAI endpoint: chat (chat completions) | responses (the Responses API)
    response_format: str = "text"           # text | json_object
    reasoning_effort: str | None = None     # OpenAI reasoning models
    thinking_budget: int | None = None      # Anthropic extended thinking
    samples: int = 1
    profile: str | None = None              # the seeds/sampling_profiles.csv row these came from
    context_window: int | None = None       # a local server's context, when it says it nowhere (transport)

    def output_affecting(self) -> dict:
        """What goes into a call's identity (not retries, timeouts or the number of samples); a field
        only when it is not its default, so calls stored before it existed keep their ids."""
        optional = {"api": (self.api, "chat"), "response_format": (self.response_format, "text"),
                    "reasoning_effort": (self.reasoning_effort, None), "thinking_budget": (self.thinking_budget, None)}
        return {"temperature": self.temperature, "max_tokens": self.max_tokens,
                **{key: value for key, (value, default) in optional.items() if value != default}}

    def sampling_key(self) -> tuple:
        return (self.temperature, self.max_tokens, self.response_format, self.reasoning_effort, self.thinking_budget)


def api_key_from_env(variable: str, base_url: str | None) -> str:
    """The key from the environment; a local server (--base-url) may go without one."""
    key = os.environ.get(variable)
    if not key and not base_url:
        raise InputError(variable, "no API key in the environment", f"export {variable}, or pass --base-url for a local server")
    return key or "local-server"


class SampledModel:
    """Sampling fields as the model takes them (seeds/model_capabilities.csv), worked out once per
    settings of a run, not at every call."""
    provider: str
    model: str

    def arguments(self, settings: Settings) -> tuple[dict, list[str]]:
        """(the fields sent with every request, notes on settings the model does not take)."""
        cache = self.__dict__.setdefault("_arguments_by_settings", {})
        key = settings.sampling_key()
        if key not in cache:
            cache[key] = self._arguments(settings)
        return cache[key]

    def _arguments(self, settings: Settings) -> tuple[dict, list[str]]:
        return request_arguments(capability(self.provider, self.model), self.model, settings)


class RemoteClient(SampledModel):
    """A provider SDK's async client: the key from the environment (never stored), the SDK's own
    retries with backoff, a timeout per attempt."""
    key_variable: str

    def __init__(self, model: str, base_url: str | None, settings: Settings):
        self.model, self.base_url = model, base_url
        self.client = self._client(api_key=api_key_from_env(self.key_variable, base_url), base_url=base_url,
                                   timeout=settings.timeout, max_retries=settings.max_retries)

    async def close(self) -> None:
        await self.client.close()


def base_url_host(base_url: str | None) -> str | None:
    return urlparse(base_url).netloc or None if base_url else None
