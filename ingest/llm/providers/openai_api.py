"""`openai:MODEL`: the openai SDK, chat completions or (`--api responses`) the Responses API; with a
base URL, any OpenAI-compatible server."""
from __future__ import annotations

from ingest.llm.providers.base import Completion, RemoteClient, Settings
from ingest.llm.providers.registry import register


class OpenAIChat(RemoteClient):
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
        from openai.types.chat import ChatCompletion

        # the SDK's documented request of a path (`client.post`), with the body as built: the same bytes
        # `chat.completions.create` sends, without re-walking the body against its parameter types (a
        # millisecond of CPU a call, which many runs at once on a few cores pay in throughput)
        return self.completion(await self.client.post("/chat/completions", body=self.body(messages, settings),
                                                      cast_to=ChatCompletion))

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


@register("openai")
def openai_provider(model: str, base_url: str | None, settings: Settings) -> OpenAIChat:
    return OpenAIResponses(model, base_url, settings) if settings.api == "responses" else OpenAIChat(model, base_url, settings)
