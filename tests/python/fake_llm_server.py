"""A loopback HTTP server that speaks the OpenAI chat-completions and the
Anthropic messages wire formats, for testing the runners with the real SDK
clients. A `script(n, body)` callable decides, per request number, whether to
fail (429 with retry-after, 500), stall, or answer with malformed content."""
from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def visible_answer(body: dict) -> str:
    """A plausible answer from the visible question in the user turn."""
    user = [m for m in body.get("messages") or body.get("input") if m["role"] == "user"][-1]["content"]
    text = user if isinstance(user, str) else "".join(part.get("text", "") for part in user)
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
    if not path.endswith("/chat/completions") or not REASONING.match(body.get("model", "")):
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


class FakeLLMServer:
    def __init__(self, script=None, delay: float = 0.0):
        self.script = script or (lambda n, body: None)
        self.delay = delay
        self.requests: list[dict] = []       # every request body, in arrival order
        self.headers: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    number = len(server.requests)
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                action = server.script(number, body) or {}
                refused = refusal(self.path, body)
                if refused:
                    action = {"status": 400, "error": refused}
                if action.get("sleep"):
                    time.sleep(action["sleep"])
                if server.delay:
                    time.sleep(server.delay)
                if action.get("status"):
                    error = action.get("error") or {"message": "injected", "type": "server_error"}
                    payload = json.dumps({"error": error}).encode()
                    self.send_response(action["status"])
                    if action.get("retry_after") is not None:
                        self.send_header("retry-after", str(action["retry_after"]))
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                text = action.get("content") or visible_answer(body)
                if self.path.endswith("/chat/completions"):
                    reply = {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": int(time.time()),
                             "model": body["model"] + "-served",
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": text}}],
                             "usage": {"prompt_tokens": 100 + number, "completion_tokens": 20, "total_tokens": 120 + number}}
                elif self.path.endswith("/responses"):
                    # a reasoning item first (not text), then the message whose output_text is the answer
                    reply = {"id": f"resp_{number}", "object": "response", "created_at": int(time.time()),
                             "status": "completed", "model": body["model"] + "-served", "error": None,
                             "incomplete_details": None, "instructions": body.get("instructions"),
                             "max_output_tokens": body.get("max_output_tokens"), "parallel_tool_calls": True,
                             "tool_choice": "auto", "tools": [], "temperature": body.get("temperature", 1.0),
                             "top_p": 1.0, "truncation": "disabled",
                             "output": [{"type": "reasoning", "id": f"rs_{number}", "summary": []},
                                        {"type": "message", "id": f"msg_{number}", "status": "completed",
                                         "role": "assistant",
                                         "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                             "usage": {"input_tokens": 80, "input_tokens_details": {"cached_tokens": 0},
                                       "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 12},
                                       "total_tokens": 110}}
                elif self.path.endswith("/messages"):
                    reply = {"id": f"msg_{number}", "type": "message", "role": "assistant", "model": body["model"] + "-served",
                             "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                             "stop_sequence": None, "usage": {"input_tokens": 90, "output_tokens": 15}}
                else:
                    self.send_error(404)
                    return
                payload = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

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
    await asyncio.get_running_loop().run_in_executor(None, __import__("sys").stdin.read)


if __name__ == "__main__":  # a standalone server for benchmarks: prints its port, serves until stdin closes
    import argparse
    import asyncio

    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    asyncio.run(serve_async(parser.parse_args().delay))
