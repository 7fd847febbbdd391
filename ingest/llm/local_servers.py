"""OpenAI-compatible local servers by name: `vllm:MODEL`, `ollama:MODEL`, `llamacpp:MODEL`.

Each is chat completions underneath (the openai SDK), at its usual base URL unless `--base-url` or
`HINDSIGHT_<SERVER>_BASE_URL` (HINDSIGHT_VLLM_BASE_URL, …) says otherwise, and what the runner must
know before it sends a request is asked of the server once:

| server | context window | prompt tokens | parallel slots |
|---|---|---|---|
| llama.cpp (`llama-server`) | `/props` (`n_ctx`) | `/apply-template`, then `/tokenize` | `/props` (`total_slots`) |
| llama-cpp-python's server | `--context-window` or the server's overflow message | `/extras/tokenize/count` of the messages' text | one |
| vLLM | `/v1/models` (`max_model_len`) | `/tokenize` with the messages (its chat template) | not said |
| Ollama | `/api/show` (`num_ctx`, else 2,048, its default) | estimated (no tokenizer endpoint) | not said |

A prompt's count is exact where the server renders the chat template itself; otherwise it is the
server's count of the messages' text plus TEMPLATE_TOKENS a message, or, with no tokenizer,
`ceil(characters / 3)`, a deliberate over-count (English text runs about four characters a token).
The runner caps each request's completion budget to what fits (llama.cpp honours `max_tokens` only:
`max_completion_tokens` and `n` are ignored), records a request that cannot fit as
`context_overflow` without sending it, and stores a reply whose usage shows fewer prompt tokens
than were sent (Ollama cuts an over-long prompt silently) as `prompt_truncated`.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from urllib.parse import urlparse

from ingest.errors import InputError

TEMPLATE_TOKENS = 8          # a chat template's role markers around one message, over-counted
MIN_COMPLETION = 16          # below this a reply cannot hold the answer JSON: the request does not fit
OLLAMA_DEFAULT_CONTEXT = 2048
# llama-cpp-python, vLLM: "This model's maximum context length is 512 tokens. However, you requested 2225 tokens"
# llama.cpp: "the request exceeds the available context size" / "exceed_context_size_error" (n_ctx in the body)
OVERFLOW = re.compile(r"maximum context length is (\d+)|exceeds? the available context size|exceed_context_size|context length exceeded"
                      r"|context window", re.I)


@dataclass(frozen=True)
class ServerKind:
    name: str
    default_base_url: str
    start: str               # how to start it, with {port} and {model}

    @property
    def url_variable(self) -> str:
        return f"HINDSIGHT_{self.name.upper()}_BASE_URL"


KINDS = {kind.name: kind for kind in (
    ServerKind("vllm", "http://localhost:8000/v1", "`vllm serve {model} --port {port}`"),
    ServerKind("ollama", "http://localhost:11434/v1", "`ollama serve` (with OLLAMA_HOST=127.0.0.1:{port}), then `ollama pull {model}`"),
    ServerKind("llamacpp", "http://localhost:8080/v1",
               "llama.cpp's server: `llama-server -m MODEL.gguf --alias {model} --port {port}` "
               "(or `python -m llama_cpp.server --model MODEL.gguf --model_alias {model} --port {port}`)"),
)}


class ContextOverflow(Exception):
    """A request that does not fit the model's context window (counted before sending, or said by the server)."""


def bad_request(error: Exception) -> tuple[dict, str] | None:
    """(the error object, its message) of an SDK's HTTP 400, whether the body nests it under "error"
    (OpenAI, llama.cpp, Anthropic) or not (vLLM); None for any other failure."""
    if getattr(error, "status_code", None) != 400:
        return None
    body = getattr(error, "body", None)
    detail = body.get("error", body) if isinstance(body, dict) else None
    detail = detail if isinstance(detail, dict) else {}
    return detail, str(detail.get("message") or error)


def overflow_window(error: Exception) -> int | bool:
    """Whether a server's HTTP 400 says the request overflowed the context: the window when it names
    one, True when it does not, False for any other failure."""
    detail, message = bad_request(error) or ({}, "")
    match = OVERFLOW.search(message)
    if not match:
        return False
    window = match.group(1) or detail.get("n_ctx")
    return int(window) if window else True


def server_root(base_url: str) -> str:
    """The server's root (the tokenizer and props endpoints are not under /v1)."""
    parsed = urlparse(base_url)
    path = re.sub(r"/v1/?$", "", parsed.path.rstrip("/"))
    return f"{parsed.scheme}://{parsed.netloc}{path}"


@dataclass
class ServerFacts:
    context_window: int | None = None
    window_source: str = "unknown"
    slots: int | None = None
    tokenizer: str = "estimate"          # template (exact) | text (+TEMPLATE_TOKENS a message) | estimate


class LocalServer:
    """What one local server says about itself, and prompt token counts through it."""

    def __init__(self, kind: ServerKind, base_url: str, model: str, context_window: int | None = None, timeout: float = 10.0):
        import httpx

        self.kind, self.model, self.root = kind, model, server_root(base_url)
        self.http = httpx.AsyncClient(timeout=timeout)
        self.facts = ServerFacts(context_window, "--context-window" if context_window else "unknown")

    @property
    def stated(self) -> bool:
        """The user gave the window (--context-window): nothing the server says replaces it."""
        return self.facts.window_source == "--context-window"

    async def _get(self, path: str) -> dict | None:
        try:
            reply = await self.http.get(self.root + path)
            return reply.json() if reply.status_code == 200 else None
        except Exception:  # noqa: BLE001 - a server without the endpoint, or not answering it: the fact stays unknown
            return None

    async def _post(self, path: str, body: dict) -> dict | None:
        try:
            reply = await self.http.post(self.root + path, json=body)
            return reply.json() if reply.status_code == 200 else None
        except Exception:  # noqa: BLE001
            return None

    async def reachable(self) -> None:
        """InputError when nothing listens at the server's address: every call would fail the same way,
        so the run stops before the first one, saying where it looked and what to start there."""
        import httpx

        try:
            await self.http.get(self.root + "/v1/models")      # any HTTP reply: something is listening
        except (httpx.ConnectError, httpx.ConnectTimeout) as error:
            parsed = urlparse(self.root)
            port = parsed.port or (443 if parsed.scheme == "https" else 80)
            raise InputError(f"{self.kind.name}:{self.model}", f"nothing answers at {self.root} ({error or 'connection refused'})",
                             f"start {self.kind.start.format(port=port, model=self.model)} there, or point --base-url "
                             f"(or {self.kind.url_variable}) at the server") from None

    async def discover(self) -> ServerFacts:
        await self.reachable()
        facts, window = self.facts, None
        if self.kind.name == "llamacpp":
            props = await self._get("/props")
            if props:
                settings = props.get("default_generation_settings") or {}
                window = settings.get("n_ctx") or props.get("n_ctx")
                facts.slots = props.get("total_slots")
                facts.tokenizer = "template"
                facts.window_source = "/props"
            elif await self._post("/extras/tokenize/count", {"input": "x"}) is not None:
                facts.tokenizer, facts.slots = "text", 1            # llama-cpp-python: one request at a time
        elif self.kind.name == "vllm":
            served = (await self._get("/v1/models") or {}).get("data", [])
            # the model's own entry, else the first (a server started with another --served-model-name)
            entry = next((e for e in served if e.get("id") == self.model), served[0] if served else {})
            window = entry.get("max_model_len")
            facts.window_source = "/v1/models" if window else facts.window_source
            if await self._post("/tokenize", {"model": self.model, "messages": [{"role": "user", "content": "x"}]}) is not None:
                facts.tokenizer = "template"
        elif self.kind.name == "ollama":
            shown = await self._post("/api/show", {"model": self.model})
            if shown is not None:
                stated = re.search(r"num_ctx\s+(\d+)", shown.get("parameters") or "")
                window = int(stated.group(1)) if stated else OLLAMA_DEFAULT_CONTEXT
                facts.window_source = "/api/show num_ctx" if stated else f"Ollama's default num_ctx ({OLLAMA_DEFAULT_CONTEXT})"
        if window and not self.stated:
            facts.context_window = int(window)
        return facts

    def learn_window(self, window: int) -> None:
        """The window a server's overflow message named (llama-cpp-python says it nowhere else)."""
        if window and not self.stated:
            self.facts.context_window, self.facts.window_source = window, "the server's overflow message"

    async def count(self, messages: list[dict]) -> tuple[int, bool]:
        """(the prompt's tokens, whether the count is exact)."""
        if self.facts.tokenizer == "template":
            if self.kind.name == "vllm":
                counted = await self._post("/tokenize", {"model": self.model, "messages": messages})
                if counted and "count" in counted:
                    return int(counted["count"]), True
            else:
                rendered = await self._post("/apply-template", {"messages": messages})
                if rendered and "prompt" in rendered:
                    tokens = await self._post("/tokenize", {"content": rendered["prompt"], "add_special": True})
                    if tokens and "tokens" in tokens:
                        return len(tokens["tokens"]), True
        if self.facts.tokenizer in ("text", "template"):
            counted = await self._post("/extras/tokenize/count", {"input": "\n".join(m["content"] for m in messages)})
            if counted and "count" in counted:
                return int(counted["count"]) + TEMPLATE_TOKENS * len(messages), False
        return sum(math.ceil(len(m["content"]) / 3) + TEMPLATE_TOKENS for m in messages), False

    def budget(self, prompt_tokens: int, max_tokens: int) -> int:
        """The completion budget that fits the window; ContextOverflow when not even MIN_COMPLETION does."""
        window = self.facts.context_window
        if window is None:
            return max_tokens
        room = window - prompt_tokens
        if room < min(MIN_COMPLETION, max_tokens):
            raise ContextOverflow(f"the prompt's {prompt_tokens} tokens leave {max(room, 0)} of the {window}-token context "
                                  f"({self.facts.window_source})")
        return min(max_tokens, room)

    async def close(self) -> None:
        await self.http.aclose()


def require_window(value: int | None) -> int | None:
    if value is not None and value < MIN_COMPLETION * 2:
        raise InputError("--context-window", f"{value} tokens", "give the server's context size in tokens, e.g. 2048")
    return value
