"""`sim:NAME`: a labelled simulator (ingest/llm/simulators/answerers.py) behind the providers' interface."""
from __future__ import annotations

import json

from ingest.llm.providers.base import Completion, SampledModel, Settings
from ingest.llm.providers.registry import register
from ingest.llm.simulators.answerers import Simulator


@register("sim")
class SimulatedModel(SampledModel):
    """A labelled simulator behind the same interface; it reads the hidden
    fields from `context`, which never reaches a request body."""
    provider = "sim"

    def __init__(self, model: str, base_url: str | None = None, settings: Settings | None = None):
        self.simulator = Simulator.parse(f"{self.provider}:{model}")
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
