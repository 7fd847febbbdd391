"""`anthropic:MODEL`: the anthropic SDK's Messages API; thinking blocks kept apart from the answer."""
from __future__ import annotations

from ingest.llm.providers.base import Completion, RemoteClient, Settings
from ingest.llm.providers.registry import register


@register("anthropic")
class AnthropicMessages(RemoteClient):
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
