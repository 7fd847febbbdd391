"""`vllm:`, `ollama:` and `llamacpp:MODEL`: an OpenAI-compatible local server by name, with what the
runner must know of it asked once (ingest/llm/local_servers.py)."""
from __future__ import annotations

import os

from ingest.llm.local_servers import KINDS, ContextOverflow, LocalServer, ServerKind, overflow_window
from ingest.llm.providers.base import Completion, Settings
from ingest.llm.providers.openai_api import OpenAIChat
from ingest.llm.providers.registry import register


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


for _kind in KINDS.values():
    register(_kind.name)(lambda model, base_url, settings, kind=_kind: LocalChat(kind, model, base_url, settings))
