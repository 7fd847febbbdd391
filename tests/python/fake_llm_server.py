"""A loopback HTTP server that speaks the OpenAI chat-completions and Responses
and the Anthropic messages wire formats, for testing the runners with the real
SDK clients. A `script(n, body)` callable decides, per request number, whether
to fail (429 with retry-after, 500), stall, answer with malformed content, or
run out of tokens (`{"truncate": True}`). Like the real APIs it refuses
parameters a model does not take (HTTP 400 with the API's error body), cuts a
reply off at the token limit when `min_complete_tokens` says the model needs
more (a reasoning model that spends its budget thinking), and returns
Anthropic thinking blocks when thinking is enabled."""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def visible_answer(body: dict) -> str:
    """A plausible answer from the visible question in the user turn."""
    user = [m for m in body.get("messages") or body.get("input") if m["role"] == "user"][-1]["content"]
    text = user if isinstance(user, str) else "".join(part.get("text", "") for part in user)
    if "hypothesis sketches as a JSON array" in text:          # a HindsightBench arm: 8 sketches
        digest = hashlib.sha256(text.encode()).digest()
        return json.dumps([{"hypothesis_id": f"H_{i + 1:03d}", "direction": "-" if digest[i] % 3 == 0 else "+",
                            "mechanism_narrative": "loopback mechanism", "candidate_proxies": ["UNRATE"],
                            "regime_hint": "loopback regime"} for i in range(8)])
    if '"estimated_date"' in text:                              # HindsightBench date recovery
        return json.dumps({"estimated_date": "2010-05"})
    if "did the S&P 500 index go up or down" in text:           # HindsightBench outcome recall
        return "up"
    match = re.search(r"Question:\n(\{.*\})", text, re.S)
    if not match:
        return "A short synthetic narrative."
    question = json.loads(match.group(1))
    if question["format"] == "multiple choice":
        return json.dumps({"answer": question["options"][0], "evidence": "loopback"})
    if question["format"] == "true/false":
        return json.dumps({"answer": "true", "evidence": "loopback"})
    return json.dumps({"answer": "Watchful waiting.", "evidence": "loopback"})


REASONING = re.compile(r"^(o[134]|gpt-5)")


def refusal(path: str, body: dict) -> dict | None:
    """The HTTP 400 body the OpenAI API returns when a reasoning model (gpt-5 family, o-series) is sent
    a parameter it does not take (shapes as the API returns them); None when the request is fine."""
    if path.endswith("/responses"):
        for name in ("max_tokens", "max_completion_tokens", "messages"):
            if name in body:
                return {"message": f"Unknown parameter: '{name}'.", "type": "invalid_request_error", "param": name,
                        "code": "unknown_parameter"}
        if REASONING.match(body.get("model", "")) and body.get("temperature") not in (None, 1, 1.0):
            return {"message": "Unsupported parameter: 'temperature' is not supported with this model.",
                    "type": "invalid_request_error", "param": "temperature", "code": "unsupported_parameter"}
        return None
    if path.endswith("/messages"):
        return anthropic_refusal(body)
    if not path.endswith("/chat/completions"):
        return None
    if not REASONING.match(body.get("model", "")):
        if "reasoning_effort" in body:
            return {"message": "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                    "type": "invalid_request_error", "param": "reasoning_effort", "code": "unsupported_parameter"}
        return None
    if "max_tokens" in body:
        return {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                           "Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}
    if body.get("temperature") not in (None, 1, 1.0):
        return {"message": f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
                           "Only the default (1) value is supported.",
                "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}
    return None


def anthropic_refusal(body: dict) -> dict | None:
    """Anthropic's 400 invalid_request_error for requests API version 2026-10-21 refuses: any sampling
    parameter (even temperature 1.0), and extended-thinking budgets it does not take."""
    for name in ("temperature", "top_p", "top_k"):
        if name in body:
            return {"type": "invalid_request_error", "message": f"{name}: Extra inputs are not permitted"}
    thinking = body.get("thinking") or {}
    if thinking.get("type") != "enabled":
        return None
    budget = thinking.get("budget_tokens", 0)
    if budget < 1024:
        message = "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    elif body.get("max_tokens", 0) <= budget:
        message = "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at " \
                  "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
    elif body.get("temperature") not in (None, 1, 1.0):
        message = "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at " \
                  "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility"
    else:
        return None
    return {"type": "invalid_request_error", "message": message}


def token_limit(body: dict) -> int | None:
    for name in ("max_completion_tokens", "max_output_tokens", "max_tokens"):
        if name in body:
            return body[name]
    return None


def reply_for(path: str, body: dict, number: int, action: dict, min_complete_tokens: int = 0) -> tuple[int, dict]:
    """(HTTP status, JSON body) of one request, as the API would answer it: a refusal, an injected
    error, or a reply (cut off at the token limit when the model needs more than it was given)."""
    refused = refusal(path, body)
    if refused:
        action = {"status": 400, "error": refused}
    if action.get("status"):
        error = action.get("error") or {"message": "injected", "type": "server_error"}
        return action["status"], ({"type": "error", "error": error} if path.endswith("/messages") else {"error": error})
    text = action.get("content") or visible_answer(body)
    limit = token_limit(body)
    # out of tokens: the API returns what it has (nothing, for a model that was still thinking)
    truncated = action.get("truncate") or (limit is not None and limit < min_complete_tokens)
    if truncated:
        text = action.get("content") or ""
    if path.endswith("/chat/completions"):
        return 200, {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": int(time.time()),
                     "model": body["model"] + "-served",
                     "choices": [{"index": 0, "finish_reason": "length" if truncated else "stop",
                                  "message": {"role": "assistant", "content": text}}],
                     "usage": {"prompt_tokens": 100 + number, "completion_tokens": 20, "total_tokens": 120 + number}}
    if path.endswith("/responses"):
        # a reasoning item first (not text), then the message whose output_text is the answer
        return 200, {"id": f"resp_{number}", "object": "response", "created_at": int(time.time()),
                     "status": "incomplete" if truncated else "completed", "model": body["model"] + "-served",
                     "error": None, "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
                     "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
                     "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                     "temperature": body.get("temperature", 1.0), "top_p": 1.0, "truncation": "disabled",
                     "output": [{"type": "reasoning", "id": f"rs_{number}",
                                 "summary": [{"type": "summary_text", "text": "Weighing the timeline."}]}]
                               + ([] if truncated and not text else
                                  [{"type": "message", "id": f"msg_{number}", "status": "completed", "role": "assistant",
                                    "content": [{"type": "output_text", "text": text, "annotations": []}]}]),
                     "usage": {"input_tokens": 80, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                               "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 110}}
    if path.endswith("/messages"):
        thinking = (body.get("thinking") or {}).get("type") == "enabled"
        content = ([{"type": "thinking", "thinking": "The later events point one way; the cutoff hides them.",
                     "signature": f"sig-{number}"}] if thinking else []) \
            + ([] if truncated and not text else [{"type": "text", "text": text}])
        return 200, {"id": f"msg_{number}", "type": "message", "role": "assistant", "model": body["model"] + "-served",
                     "content": content, "stop_reason": "max_tokens" if truncated else "end_turn",
                     "stop_sequence": None, "usage": {"input_tokens": 90, "output_tokens": 15}}
    return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}


def prompt_tokens(body: dict) -> int:
    """A local server's count of a chat request's prompt: four characters a token, ten a message for the template."""
    return sum(len(m["content"]) // 4 + 10 for m in body.get("messages", []))


def vllm_overflow(body: dict, context: int) -> dict | None:
    """vLLM's HTTP 400 body for a prompt that does not fit (an error object at the top level)."""
    asked = prompt_tokens(body) + (token_limit(body) or 0)
    if prompt_tokens(body) < context:
        return None
    return {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
            "message": f"This model's maximum context length is {context} tokens. However, you requested {asked} tokens "
                       f"({prompt_tokens(body)} in the messages, {token_limit(body) or 0} in the completion). Please reduce "
                       "the length of the messages or completion."}


class LocalServerFake:
    """What vLLM or Ollama says of itself beside chat completions. vLLM: `/v1/models` with
    max_model_len, `/tokenize` of the chat messages, and HTTP 400 for a prompt beyond the context.
    Ollama: `/api/show` (a num_ctx only when SHOWN_NUM_CTX is set, as a Modelfile would), no tokenizer,
    and a prompt beyond the context it really runs with (CONTEXT, its OLLAMA_CONTEXT_LENGTH) cut
    silently: the reply's usage counts the prompt it kept."""

    def __init__(self, kind: str, context: int, shown_num_ctx: int | None = None):
        self.kind, self.context, self.shown_num_ctx = kind, context, shown_num_ctx
        self.sent = 0           # chat requests that reached the model

    def get(self, path: str) -> tuple[int, dict] | None:
        if self.kind == "vllm" and path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": "qwen3.6-27b", "object": "model", "owned_by": "vllm",
                                                     "max_model_len": self.context}]}
        return None

    def post(self, path: str, body: dict) -> tuple[int, dict] | None:
        if self.kind == "vllm" and path == "/tokenize":
            count = prompt_tokens(body)
            return 200, {"count": count, "max_model_len": self.context, "tokens": list(range(count))}
        if self.kind == "ollama" and path == "/api/show":
            parameters = f"num_ctx {self.shown_num_ctx}\nstop <|im_end|>" if self.shown_num_ctx else "stop <|im_end|>"
            return 200, {"parameters": parameters, "model_info": {"qwen2.context_length": 32768}}
        if path.endswith("/chat/completions"):
            if self.kind == "vllm":
                refused = vllm_overflow(body, self.context)
                if refused:
                    return 400, refused
            self.sent += 1
        return None

    def usage(self, body: dict) -> int:
        return min(prompt_tokens(body), self.context - 8) if self.kind == "ollama" else prompt_tokens(body)


class FakeLLMServer:
    def __init__(self, script=None, delay: float = 0.0, min_complete_tokens: int = 0, batch_script=None,
                 batch_api: bool = True, local: LocalServerFake | None = None):
        self.script = script or (lambda n, body: None)
        self.local = local
        # False: a server that serves completions only, as vLLM, llama.cpp and Ollama do: its framework
        # answers every Files and Batches route 404 {"detail": "Not Found"} (FastAPI's body)
        self.batch_api = batch_api
        self.delay = delay
        self.min_complete_tokens = min_complete_tokens      # a reply needs this many tokens, or it is cut off
        self.requests: list[dict] = []       # every request body, in arrival order
        self.headers: list[dict] = []
        self.lock = threading.Lock()
        self.batches = FakeBatches(self, batch_script)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send(self, status: int, payload, content_type: str = "application/json", headers: dict | None = None):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                answered = server.local.get(self.path) if server.local else None
                if answered:
                    self.send(*answered)
                    return
                if not server.batch_api or server.local:
                    self.send(404, {"detail": "Not Found"})
                    return
                self.send(*server.batches.get(self.path))

            def do_POST(self):
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path.split("?")[0].endswith(("/files", "/batches", "/cancel")):
                    if not server.batch_api:
                        self.send(404, {"detail": "Not Found"})
                        return
                    self.send(*server.batches.post(self.path, raw, self.headers.get("content-type", "")))
                    return
                body = json.loads(raw)
                answered = server.local.post(self.path, body) if server.local else None
                if answered:
                    self.send(*answered)
                    return
                if server.local and not self.path.endswith("/chat/completions"):
                    self.send(404, {"detail": "Not Found"})
                    return
                with server.lock:
                    number = len(server.requests)
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                action = server.script(number, body) or {}
                if action.get("sleep"):
                    time.sleep(action["sleep"])
                if server.delay:
                    time.sleep(server.delay)
                status, reply = reply_for(self.path, body, number, action, server.min_complete_tokens)
                if server.local and status == 200:
                    reply["usage"]["prompt_tokens"] = server.local.usage(body)
                retry = {"retry-after": str(action["retry_after"])} if action.get("retry_after") is not None else {}
                self.send(status, reply, headers=retry)

        class Server(ThreadingHTTPServer):
            request_queue_size = 256   # many clients connect at once under high concurrency

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_completion(body: dict, number: int) -> dict:
    return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"] + "-served",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": visible_answer(body)}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}


async def serve_async(delay: float) -> None:
    """Chat completions on an asyncio server (keep-alive, no thread per
    connection), so that a benchmark measures the client, not this server."""
    import asyncio

    served = [0]

    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                body = json.loads(await reader.readexactly(length))
                served[0] += 1
                await asyncio.sleep(delay)
                payload = json.dumps(chat_completion(body, served[0])).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                             + str(len(payload)).encode() + b"\r\n\r\n" + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    stdin = __import__("sys").stdin
    # serves until stdin closes; a line "count" on stdin is answered with the requests served so far
    while line := await asyncio.get_running_loop().run_in_executor(None, stdin.readline):
        if line.strip() == "count":
            print(served[0], flush=True)


if __name__ == "__main__":  # a standalone server for benchmarks: prints its port, serves until stdin closes
    import argparse
    import asyncio

    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    asyncio.run(serve_async(parser.parse_args().delay))


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + "Z"


class FakeBatches:
    """OpenAI's Files and Batches endpoints and Anthropic's Message Batches endpoints with their object
    shapes and state transitions. A batch moves one state at every retrieve (OpenAI: validating,
    in_progress, finalizing, completed; Anthropic: in_progress, ended); its items are answered with the
    server's reply logic (refusals and truncation included). `batch_script(provider, index, batch)` may
    return {"expire": True} (the window ends half done), {"stall": True} (never progresses), or
    {"polls": n} (stays in progress for n retrieves)."""

    def __init__(self, server: FakeLLMServer, script=None):
        self.server, self.script = server, script or (lambda provider, index, batch: None)
        self.files: dict[str, dict] = {}
        self.openai: dict[str, dict] = {}
        self.anthropic: dict[str, dict] = {}
        self.plans: dict[str, dict] = {}
        self.inputs: dict[str, list[dict]] = {}
        self.results: dict[str, bytes] = {}
        self.lock = threading.Lock()

    # -- routing -------------------------------------------------------------------------------
    def post(self, path: str, raw: bytes, content_type: str) -> tuple:
        path = path.split("?")[0]
        with self.lock:
            if path.endswith("/v1/files"):
                return self._upload(raw, content_type)
            if path.endswith("/v1/batches"):
                return self._create_openai(json.loads(raw))
            if path.endswith("/v1/messages/batches"):
                return self._create_anthropic(json.loads(raw))
            if path.endswith("/cancel"):
                batch_id = path.split("/")[-2]
                return self._cancel(batch_id)
        return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}

    def get(self, path: str) -> tuple:
        route, _, query = path.partition("?")
        parts = route.strip("/").split("/")
        with self.lock:
            if route.endswith("/v1/files"):
                purpose = dict(p.split("=") for p in query.split("&") if "=" in p).get("purpose")
                data = [self._file_object(f) for f in self.files.values() if purpose in (None, f["purpose"])]
                return 200, {"object": "list", "data": data[::-1], "has_more": False,
                             "first_id": data[-1]["id"] if data else None, "last_id": data[0]["id"] if data else None}
            if len(parts) >= 4 and parts[-1] == "content" and parts[-3] == "files":
                found = self.files.get(parts[-2])
                return (200, found["content"], "application/octet-stream") if found else (404, {"error": {
                    "message": "No such File object", "type": "invalid_request_error", "code": None}})
            if route.endswith("/v1/batches"):
                data = list(self.openai.values())[::-1]
                return 200, {"object": "list", "data": data, "has_more": False,
                             "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None}
            if parts[-2:-1] == ["batches"] and parts[-1] in self.openai:
                return 200, self._advance_openai(parts[-1])
            if route.endswith("/v1/messages/batches"):
                data = list(self.anthropic.values())[::-1]
                return 200, {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
                             "last_id": data[-1]["id"] if data else None}
            if parts[-1] == "results" and parts[-2] in self.anthropic:
                if self.anthropic[parts[-2]]["processing_status"] != "ended":
                    return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                            "message": "Batch is still processing"}}
                return 200, self.results[parts[-2]], "application/binary"
            if parts[-2:-1] == ["batches"] and parts[-1] in self.anthropic:
                return 200, self._advance_anthropic(parts[-1])
        return 404, {"error": {"message": f"no route {route}", "type": "invalid_request_error"}}

    # -- OpenAI --------------------------------------------------------------------------------
    def _upload(self, raw: bytes, content_type: str) -> tuple:
        from email.parser import BytesParser
        from email.policy import HTTP

        message = BytesParser(policy=HTTP).parsebytes(b"content-type: " + content_type.encode() + b"\r\n\r\n" + raw)
        fields = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        upload, purpose = fields["file"], fields["purpose"].get_content().strip()
        content = upload.get_payload(decode=True)
        file_id = f"file-{len(self.files) + 1:06d}"
        self.files[file_id] = {"id": file_id, "purpose": purpose, "filename": upload.get_filename(),
                               "content": content, "created_at": int(time.time())}
        return 200, self._file_object(self.files[file_id])

    @staticmethod
    def _file_object(f: dict) -> dict:
        return {"id": f["id"], "object": "file", "bytes": len(f["content"]), "created_at": f["created_at"],
                "filename": f["filename"], "purpose": f["purpose"], "status": "processed", "status_details": None}

    def _create_openai(self, body: dict) -> tuple:
        source = self.files.get(body.get("input_file_id"))
        if source is None:
            return 404, {"error": {"message": f"No such File object: {body.get('input_file_id')}",
                                   "type": "invalid_request_error", "param": "input_file_id", "code": None}}
        lines = [json.loads(line) for line in source["content"].decode().splitlines() if line.strip()]
        models = {line["body"]["model"] for line in lines}
        if len(models) > 1 or any(line["url"] != body["endpoint"] for line in lines):
            return 400, {"error": {"message": "The batch input file must hold requests to one model and one endpoint.",
                                   "type": "invalid_request_error", "param": None, "code": "invalid_request"}}
        now = int(time.time())
        batch_id = f"batch_{len(self.openai) + 1:06d}"
        batch = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"], "errors": None,
                 "input_file_id": source["id"], "completion_window": body.get("completion_window", "24h"),
                 "status": "validating", "output_file_id": None, "error_file_id": None, "created_at": now,
                 "in_progress_at": None, "expires_at": now + 86400, "finalizing_at": None, "completed_at": None,
                 "failed_at": None, "expired_at": None, "cancelling_at": None, "cancelled_at": None,
                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                 "metadata": body.get("metadata")}
        self.openai[batch_id], self.inputs[batch_id] = batch, lines
        self.plans[batch_id] = self.script("openai", len(self.openai) - 1, batch) or {}
        return 200, batch

    def _advance_openai(self, batch_id: str) -> dict:
        batch, plan = self.openai[batch_id], self.plans[batch_id]
        now = int(time.time())
        if batch["status"] == "validating":
            batch.update(status="in_progress", in_progress_at=now)
        elif batch["status"] == "in_progress" and not plan.get("stall"):
            if plan.get("polls", 0) > 0:
                plan["polls"] -= 1
            elif plan.get("expire"):
                self._finish_openai(batch, len(self.inputs[batch_id]) // 2, expired=True)
                batch.update(status="expired", expired_at=now)
            else:
                batch.update(status="finalizing", finalizing_at=now)
        elif batch["status"] == "finalizing":
            self._finish_openai(batch, len(self.inputs[batch_id]))
            batch.update(status="completed", completed_at=now)
        elif batch["status"] == "cancelling":
            self._finish_openai(batch, 0, expired=True, code="batch_cancelled")
            batch.update(status="cancelled", cancelled_at=now)
        return batch

    def _finish_openai(self, batch: dict, n_done: int, expired: bool = False, code: str = "batch_expired") -> None:
        outputs, errors = [], []
        for index, line in enumerate(self.inputs[batch["id"]]):
            if index >= n_done:
                if expired:
                    errors.append({"id": f"batch_req_{index}", "custom_id": line["custom_id"], "response": None,
                                   "error": {"code": code, "message": "This request could not be executed before the "
                                                                      "completion window expired."}})
                continue
            with self.server.lock:
                number = len(self.server.requests)
                self.server.requests.append(line["body"])
            status, reply = reply_for(line["url"], line["body"], number,
                                      self.server.script(number, line["body"]) or {}, self.server.min_complete_tokens)
            entry = {"id": f"batch_req_{index}", "custom_id": line["custom_id"],
                     "response": {"status_code": status, "request_id": f"req_{number}", "body": reply}, "error": None}
            (outputs if status == 200 else errors).append(entry)
        for kind, entries in (("output_file_id", outputs), ("error_file_id", errors)):
            if entries:
                file_id = f"file-{len(self.files) + 1:06d}"
                self.files[file_id] = {"id": file_id, "purpose": "batch_output", "filename": f"{batch['id']}_{kind}.jsonl",
                                       "content": "".join(json.dumps(e) + "\n" for e in entries).encode(),
                                       "created_at": int(time.time())}
                batch[kind] = file_id
        batch["request_counts"].update(completed=len(outputs), failed=sum(e["response"] is not None for e in errors))

    # -- Anthropic -----------------------------------------------------------------------------
    def _create_anthropic(self, body: dict) -> tuple:
        requests = body.get("requests") or []
        bad = [r.get("custom_id") for r in requests if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", r.get("custom_id") or "")]
        if bad:
            return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                    "message": "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"}}
        now = time.time()
        batch_id = f"msgbatch_{len(self.anthropic) + 1:06d}"
        batch = {"id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                 "request_counts": {"processing": len(requests), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
                 "created_at": _iso(now), "expires_at": _iso(now + 86400), "ended_at": None, "archived_at": None,
                 "cancel_initiated_at": None, "results_url": None}
        self.anthropic[batch_id], self.inputs[batch_id] = batch, requests
        self.plans[batch_id] = self.script("anthropic", len(self.anthropic) - 1, batch) or {}
        return 200, batch

    def _advance_anthropic(self, batch_id: str) -> dict:
        batch, plan = self.anthropic[batch_id], self.plans[batch_id]
        if batch["processing_status"] == "canceling":
            self._finish_anthropic(batch, 0, "canceled")
        elif batch["processing_status"] == "in_progress" and not plan.get("stall"):
            if plan.get("polls", 0) > 0:
                plan["polls"] -= 1
            else:
                n = len(self.inputs[batch_id])
                self._finish_anthropic(batch, n // 2 if plan.get("expire") else n, "expired")
        return batch

    def _finish_anthropic(self, batch: dict, n_done: int, rest: str) -> None:
        lines, counts = [], {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for index, request in enumerate(self.inputs[batch["id"]]):
            if index >= n_done:
                lines.append({"custom_id": request["custom_id"], "result": {"type": rest}})
                counts[rest] += 1
                continue
            with self.server.lock:
                number = len(self.server.requests)
                self.server.requests.append(request["params"])
            status, reply = reply_for("/v1/messages", request["params"], number,
                                      self.server.script(number, request["params"]) or {}, self.server.min_complete_tokens)
            if status == 200:
                lines.append({"custom_id": request["custom_id"], "result": {"type": "succeeded", "message": reply}})
                counts["succeeded"] += 1
            else:
                lines.append({"custom_id": request["custom_id"], "result": {"type": "errored", "error": reply}})
                counts["errored"] += 1
        self.results[batch["id"]] = "".join(json.dumps(line) + "\n" for line in lines).encode()
        batch.update(processing_status="ended", request_counts=counts, ended_at=_iso(time.time()),
                     results_url=f"{self.server.url}/v1/messages/batches/{batch['id']}/results")

    def _cancel(self, batch_id: str) -> tuple:
        if batch_id in self.openai:
            batch = self.openai[batch_id]
            if batch["status"] in ("validating", "in_progress", "finalizing"):
                batch.update(status="cancelling", cancelling_at=int(time.time()))
            return 200, batch
        if batch_id in self.anthropic:
            batch = self.anthropic[batch_id]
            if batch["processing_status"] == "in_progress":
                batch.update(processing_status="canceling", cancel_initiated_at=_iso(time.time()))
            return 200, batch
        return 404, {"error": {"message": f"No batch {batch_id}", "type": "invalid_request_error"}}
