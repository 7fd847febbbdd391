"""Simulated responders, labelled `sim:` everywhere they appear.

They stand in for a model in the demo and in estimator checks. Unlike a real
model they read the hidden evaluation fields (they are oracles with a planted
behaviour), so their answers measure the estimators, never a model:

- `sim:prospective` always gives the reference answer;
- `sim:hindsight@P` with full visibility gives the hindsight trap with
  probability P on trap-bearing questions, else the reference;
- `sim:noise@P` gives a random option (or a non-answer to free response)
  with probability P, else the reference;
- `sim:exact-match` answers like `sim:prospective` and, as a judge, scores
  free responses by exact (case-folded) match with the reference and trap.

Every draw is a deterministic function of the simulator, the request and the
seed, so repeated runs give identical answers.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from ingest.errors import InputError

_SPEC = re.compile(r"^sim:(prospective|exact-match|hindsight@([01](?:\.\d+)?)|noise@([01](?:\.\d+)?))$")


@dataclass(frozen=True)
class Simulator:
    name: str           # the model name stored with the answers, e.g. sim:hindsight@0.3
    kind: str           # prospective | hindsight | noise
    rate: float

    @classmethod
    def parse(cls, spec: str) -> "Simulator":
        match = _SPEC.match(spec.strip())
        if not match:
            raise InputError("--model", f"{spec!r} is not a simulator",
                             "use sim:prospective, sim:exact-match, sim:hindsight@P or sim:noise@P with 0 <= P <= 1")
        kind = match.group(1).split("@")[0]
        rate = float(match.group(2) or match.group(3) or 0.0)
        if not 0.0 <= rate <= 1.0:
            raise InputError("--model", f"rate {rate} is outside [0, 1]", "give P between 0 and 1")
        return cls(spec.strip(), kind, rate)

    def uniform(self, *key: object) -> float:
        digest = hashlib.sha256("|".join(map(str, (self.name, *key))).encode()).hexdigest()
        return int(digest[:13], 16) / 16**13

    def answer(self, request: dict, seed: int = 0) -> tuple[str, str]:
        """(answer, evidence) for one request row joined with its question's hidden fields."""
        reference = request["correct_answer"]
        trap = request.get("hindsight_trap")
        draw = self.uniform(request["request_id"], seed)
        if self.kind == "hindsight" and request["visibility"] == "full" and trap and draw < self.rate:
            return trap, f"{self.name}: trap answer (planted hindsight, u={draw:.3f})"
        if self.kind == "noise" and draw < self.rate:
            options = json.loads(request["options_json"]) if request.get("options_json") else None
            pick = self.uniform(request["request_id"], seed, "option")
            if request["format"] == "multiple choice" and options:
                return options[int(pick * len(options))], f"{self.name}: random option"
            if request["format"] == "true/false":
                return ("true" if pick < 0.5 else "false"), f"{self.name}: random truth value"
            return "The information given does not allow an answer.", f"{self.name}: non-answer"
        return reference, f"{self.name}: reference answer"

    def judge(self, payload: dict) -> dict:
        """Exact-match judging of free responses (the judge prompts' JSON shapes)."""
        same = lambda a, b: a is not None and b is not None and a.strip().lower() == b.strip().lower()  # noqa: E731
        score = lambda a, b: 1 if same(a, b) else 0  # noqa: E731
        reference, trap = payload.get("reference_answer"), payload.get("hindsight_trap")
        # a reason beside the scores, as judges write one (the scores are what the runner reads)
        def match(a):
            return ("the reference answer" if same(a, reference) else "the hindsight trap" if same(a, trap)
                    else "neither the reference answer nor the hindsight trap")
        if "answer" in payload:
            return {"accuracy_score": score(payload["answer"], reference), "htr_score": score(payload["answer"], trap),
                    "reason": f"Exact match: the answer is {match(payload['answer'])}."}
        full, masked = payload["full_condition_answer"], payload["masked_condition_answer"]
        result = {"full_equals_masked": same(full, masked),
                  "full_accuracy_score": score(full, reference), "masked_accuracy_score": score(masked, reference),
                  "full_htr_score": score(full, trap), "masked_htr_score": score(masked, trap)}
        result["hbr_score"] = result["masked_accuracy_score"] * result["full_htr_score"]
        result["reason"] = f"Exact match: the full answer is {match(full)}; the masked answer is {match(masked)}."
        return result

    def narrative(self, tts_lines: str) -> str:
        """A plain synthetic narrative: the visible events in timeline order."""
        sentences = []
        for line in tts_lines.splitlines():
            event, _, hours = line.rpartition(" | ")
            sentences.append(f"At {hours} hours: {event}.")
        return f"[{self.name} synthetic narrative] " + " ".join(sentences)
