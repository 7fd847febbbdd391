"""Model providers behind one async `complete(messages, settings)` call.

Sampling fields follow the model's row in seeds/model_capabilities.csv (which token
parameter, whether a temperature is taken, reasoning effort or extended thinking). Every
completion says why it ended (`finish_reason`: a reply cut off by the token limit is
`truncated`) and keeps reasoning or thinking text apart from the answer text.
`openai:MODEL` uses the openai SDK (chat completions; with a base URL any OpenAI-compatible
server); `vllm:`, `ollama:` and `llamacpp:MODEL` the same, with the server's own defaults, context
window and token counts (ingest/llm/local_servers.py); `anthropic:MODEL` the anthropic SDK
(messages); `sim:NAME` a labelled simulator. Each is a row of PROVIDERS. SDKs are
imported only when their provider is used. Retries with exponential backoff
that honour `retry-after` on 429, 5xx and timeouts are the SDKs' own
(`max_retries`), with a per-request `timeout`. Keys come from the environment
and are never stored.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from urllib.parse import urlparse

from ingest.errors import InputError
from ingest.llm.capabilities import capability, request_arguments
from ingest.llm.local_servers import KINDS, ContextOverflow, LocalServer, ServerKind, overflow_window
from ingest.llm.simulators.answerers import Simulator

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


class _Sampled:
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


class _Remote(_Sampled):
    """A provider SDK's async client: the key from the environment (never stored), the SDK's own
    retries with backoff, a timeout per attempt."""
    key_variable: str

    def __init__(self, model: str, base_url: str | None, settings: Settings):
        self.model, self.base_url = model, base_url
        self.client = self._client(api_key=api_key_from_env(self.key_variable, base_url), base_url=base_url,
                                   timeout=settings.timeout, max_retries=settings.max_retries)

    async def close(self) -> None:
        await self.client.close()


class OpenAIChat(_Remote):
    provider, key_variable = "openai", "OPENAI_API_KEY"
    endpoint = "/v1/chat/completions"        # what a batch line names

    @staticmethod
    def _client(**options):
        import openai

        return openai.AsyncOpenAI(**options)

    def body(self, messages: list[dict], settings: Settings) -> dict:
        """The request body (the same for a direct call and a batch line)."""
        return {"model": self.model, "messages": messages, **self.arguments(settings)[0]}

    async def complete(self, messages: list[dict], settings: Settings, context: dict | None = None) -> Completion:
        return self.completion(await self.client.chat.completions.create(**self.body(messages, settings)))

    @staticmethod
    def parse(data: dict):
        """A reply body from a batch result file, built as leniently as the SDK builds a direct reply (a
        field the API adds or drops must not lose a paid result)."""
        from openai.types.chat import ChatCompletion

        return ChatCompletion.construct(**data)

    @staticmethod
    def completion(reply) -> Completion:
        usage, choice = reply.usage, reply.choices[0]
        # OpenAI-compatible servers that think aloud (vLLM, llama.cpp, DeepSeek) put it in reasoning_content
        reasoning = getattr(choice.message, "reasoning_content", None) or (choice.message.model_extra or {}).get("reasoning_content")
        return Completion(choice.message.content or "", reply.model,
                          usage.prompt_tokens if usage else None, usage.completion_tokens if usage else None,
                          choice.finish_reason, reasoning)


class OpenAIResponses(OpenAIChat):
    """OpenAI's Responses API (the same client): instructions apart from the input, `max_output_tokens`
    (reasoning included), and the reply's text assembled from its message items (reasoning items are
    not text)."""
    endpoint = "/v1/responses"

    def _arguments(self, settings: Settings) -> tuple[dict, list[str]]:
        arguments, notes = super()._arguments(settings)
        limit = {key: arguments.pop(key) for key in ("max_tokens", "max_completion_tokens") if key in arguments}
        arguments = {"max_output_tokens": next(iter(limit.values())), **arguments}
        if "reasoning_effort" in arguments:
            arguments["reasoning"] = {"effort": arguments.pop("reasoning_effort")}
        if "response_format" in arguments:
            arguments["text"] = {"format": arguments.pop("response_format")}
        return arguments, notes

    def body(self, messages: list[dict], settings: Settings) -> dict:
        instructions = "\n".join(m["content"] for m in messages if m["role"] == "system")
        turns = [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"]
        return {"model": self.model, **({"instructions": instructions} if instructions else {}), "input": turns,
                **self.arguments(settings)[0]}

    async def complete(self, messages: list[dict], settings: Settings, context: dict | None = None) -> Completion:
        return self.completion(await self.client.responses.create(**self.body(messages, settings)))

    @staticmethod
    def parse(data: dict):
        from openai.types.responses import Response

        return Response.construct(**data)

    @staticmethod
    def completion(reply) -> Completion:
        text = "".join(part.text for item in reply.output if item.type == "message"
                       for part in item.content if part.type == "output_text")
        reasoning = "\n".join(part.text for item in reply.output if item.type == "reasoning"
                              for part in (item.summary or []))
        usage = reply.usage
        # an incomplete response says why: max_output_tokens is the token limit
        finish = (reply.incomplete_details.reason if reply.status == "incomplete" and reply.incomplete_details
                  else reply.status)
        return Completion(text, reply.model, usage.input_tokens if usage else None, usage.output_tokens if usage else None,
                          finish, reasoning or None)


class AnthropicMessages(_Remote):
    provider, key_variable = "anthropic", "ANTHROPIC_API_KEY"
    endpoint = "/v1/messages"

    @staticmethod
    def _client(**options):
        import anthropic

        return anthropic.AsyncAnthropic(**options)

    def body(self, messages: list[dict], settings: Settings) -> dict:
        system = "\n".join(m["content"] for m in messages if m["role"] == "system")
        turns = [m for m in messages if m["role"] != "system"]
        return {"model": self.model, "system": system, "messages": turns, **self.arguments(settings)[0]}

    async def complete(self, messages: list[dict], settings: Settings, context: dict | None = None) -> Completion:
        return self.completion(await self.client.messages.create(**self.body(messages, settings)))

    @staticmethod
    def parse(data: dict):
        from anthropic.types import Message

        return Message.construct(**data)

    @staticmethod
    def completion(reply) -> Completion:
        # thinking blocks stay apart from the answer text
        text = "".join(block.text for block in reply.content if block.type == "text")
        thinking = "\n".join(block.thinking for block in reply.content if block.type == "thinking")
        return Completion(text, reply.model, reply.usage.input_tokens, reply.usage.output_tokens, reply.stop_reason,
                          thinking or None)


class SimulatedModel(_Sampled):
    """A labelled simulator behind the same interface; it reads the hidden
    fields from `context`, which never reaches a request body."""
    provider = "sim"

    def __init__(self, spec: str):
        self.simulator = Simulator.parse(spec)
        self.model, self.base_url = self.simulator.name, None

    async def complete(self, messages: list[dict], settings: Settings, context: dict | None = None) -> Completion:
        context = context or {}
        if context.get("kind") in ("individual", "paired"):
            verdict = self.simulator.judge(json.loads(messages[-1]["content"]))
            return Completion(json.dumps(verdict), self.simulator.name, None, None, "stop")
        if "tts_lines" in context:
            return Completion(self.simulator.narrative(context["tts_lines"]), self.simulator.name, None, None, "stop")
        answer, evidence = self.simulator.answer(context, context.get("seed", 0))
        return Completion(json.dumps({"answer": answer, "evidence": evidence}), self.simulator.name, None, None, "stop")

    async def close(self) -> None:
        return None


class LocalChat(OpenAIChat):
    """An OpenAI-compatible local server by name (`vllm:`, `ollama:`, `llamacpp:`): its usual base URL,
    its context window and prompt token counts asked of it once, the completion budget capped to what
    fits, a request that cannot fit raised as ContextOverflow before it is sent (or when the server
    says so), and a reply whose usage shows a shortened prompt marked `prompt_truncated`."""

    def __init__(self, kind: ServerKind, model: str, base_url: str | None, settings: Settings):
        self.provider = kind.name
        super().__init__(model, base_url or os.environ.get(kind.url_variable) or kind.default_base_url, settings)
        self.server = LocalServer(kind, self.base_url, model, settings.context_window)
        self._ready: object = None

    async def prepare(self):
        """Ask the server about itself once (the first call waits for it)."""
        import asyncio

        if self._ready is None:
            self._ready = asyncio.ensure_future(self.server.discover())
        return await self._ready

    def default_concurrency(self) -> int | None:
        return self.server.facts.slots

    async def complete(self, messages: list[dict], settings: Settings, context: dict | None = None) -> Completion:
        await self.prepare()
        prompt_tokens, exact = await self.server.count(messages)
        budget = self.server.budget(prompt_tokens, settings.max_tokens)
        body = self.body(messages, settings)
        body.pop("max_completion_tokens", None)          # local servers honour max_tokens only
        body["max_tokens"] = budget
        try:
            reply = await self.client.chat.completions.create(**body)
        except Exception as error:
            window = overflow_window(error)
            if window is False:
                raise
            if window is not True:
                self.server.learn_window(window)
            raise ContextOverflow(f"the server refused the prompt's ~{prompt_tokens} tokens: {error}") from error
        completion = self.completion(reply)
        completion.sent_max_tokens = budget
        used = completion.input_tokens
        # a server that cut the prompt to fit (Ollama) reports fewer prompt tokens than were sent
        if used is not None and (used < prompt_tokens - 4 if exact else used < prompt_tokens / 2):
            completion.finish_reason = "prompt_truncated"
        return completion

    async def close(self) -> None:
        await super().close()
        await self.server.close()


def _openai(provider: str, model: str, base_url: str | None, settings: Settings):
    return OpenAIResponses(model, base_url, settings) if settings.api == "responses" else OpenAIChat(model, base_url, settings)


def _local(kind: ServerKind):
    def make(provider: str, model: str, base_url: str | None, settings: Settings):
        return LocalChat(kind, model, base_url, settings)
    return make


# PROVIDER of --model PROVIDER:MODEL -> what makes its client
PROVIDERS = {
    "openai": _openai,
    "anthropic": lambda provider, model, base_url, settings: AnthropicMessages(model, base_url, settings),
    "sim": lambda provider, model, base_url, settings: SimulatedModel(f"{provider}:{model}"),
    **{name: _local(kind) for name, kind in KINDS.items()},
}


def provider_of(spec: str) -> tuple[str, str]:
    """(provider, model) of PROVIDER:MODEL, or an InputError before anything is written."""
    provider, sep, model = spec.partition(":")
    if not sep or not model:
        raise InputError("--model", f"{spec!r} is not PROVIDER:MODEL",
                         "write e.g. openai:gpt-4.1-mini, anthropic:claude-haiku-4-5, llamacpp:smollm2 or sim:prospective")
    if provider not in PROVIDERS:
        raise InputError("--model", f"unknown provider {provider!r}", f"use one of {', '.join(PROVIDERS)}")
    return provider, model


def make_provider(spec: str, base_url: str | None, settings: Settings):
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
    return PROVIDERS[provider](provider, model, base_url, settings)


def base_url_host(base_url: str | None) -> str | None:
    return urlparse(base_url).netloc or None if base_url else None
