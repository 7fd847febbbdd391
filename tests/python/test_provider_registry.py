"""Providers come from a registry keyed by the prefix of --model PREFIX:MODEL (ingest/llm/providers/):
the built-in modules register themselves, and a package installed beside the project adds one
through the `hindsight.providers` entry point, without an edit here."""
from __future__ import annotations

import asyncio
import sys

import pytest

from ingest.errors import InputError
from ingest.llm.providers import PROVIDERS, Settings, SimulatedModel, make_provider, provider_of, register

PLUGIN = '''
from ingest.llm.providers import Completion, register


@register("echo")
class Echo:
    provider = "echo"

    def __init__(self, model, base_url, settings):
        self.model, self.base_url = model, base_url

    async def complete(self, messages, settings, context=None):
        return Completion(messages[-1]["content"][::-1], self.model, 1, 1, "stop")

    async def close(self):
        return None
'''


def test_every_built_in_prefix_is_registered_by_its_module():
    assert {"openai", "anthropic", "sim", "vllm", "ollama", "llamacpp"} <= set(PROVIDERS)
    assert isinstance(make_provider("sim:prospective", None, Settings()), SimulatedModel)
    local = make_provider("ollama:qwen3", None, Settings())
    assert (local.provider, local.model, local.base_url) == ("ollama", "qwen3", "http://localhost:11434/v1")


def test_an_unknown_prefix_names_the_known_ones():
    with pytest.raises(InputError) as raised:
        provider_of("bedrock:claude")
    assert "unknown provider 'bedrock'" in str(raised.value) and "anthropic, llamacpp" in str(raised.value)


def test_a_prefix_is_registered_once():
    with pytest.raises(ValueError, match="'sim' is already registered"):
        register("sim")(lambda model, base_url, settings: None)


def test_a_package_adds_a_provider_through_its_entry_point(tmp_path, monkeypatch):
    (tmp_path / "echo_provider.py").write_text(PLUGIN)
    info = tmp_path / "echo_provider-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-provider\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[hindsight.providers]\necho = echo_provider\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(PROVIDERS, "echo", raising=False)
    monkeypatch.delitem(sys.modules, "echo_provider", raising=False)
    assert "echo" not in PROVIDERS
    echo = make_provider("echo:mirror", None, Settings())        # imported when its prefix is first asked for
    reply = asyncio.run(echo.complete([{"role": "user", "content": "abc"}], Settings()))
    assert (reply.text, reply.reported_model) == ("cba", "mirror")
    monkeypatch.delitem(PROVIDERS, "echo")
