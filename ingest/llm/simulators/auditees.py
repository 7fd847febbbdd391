"""Simulated HindsightBench auditees (`sim:audit-…`): labelled models with a
planted date trigger and knowledge cutoff that answer the real arm, REC and LAP
prompts through the runner, for the demo and for checks of the whole
collection path. Nothing here is a real model.

An auditee reads the date a prompt asserts (R and D: the true date; W and W72:
the transplant date; M and REC: none) from the prompt text itself, as a model
would. What a model would know from the data or from memory comes from the
call's hidden context (never sent): the realized direction of the true date
stands for what the macro data alone suggest, and the true date for what a
model before its cutoff recognises.

- `trigger`: the bearish share of a sketch rises by this much when the asserted
  date is a crisis month (E2 ~ trigger; E3 > 0 through W);
- `reveal`: R's extra bearishness in crisis months (E1);
- `cutoff`: LAP recalls the realized direction (with probability `recall`)
  and REC recovers the date (0.6) up to this month and not after it;
- `cutoff=None`: LAP answers are coin flips (recall at chance);
- `trigger_years`: the trigger fires only for crisis months of these years (a
  fragile trigger: audit-fragile reacts to the GFC block alone, so its E2 does
  not survive leaving that block out, and the robustness check flags it);
- `audit-trigger-bf16` is another serving configuration of audit-trigger with a
  weaker trigger (as BM-2a's FP8 -> BF16 shift), for the serving-stability check.

Replies carry the release's quirks at small planted rates: trailing commas
(parser v1 fails, v2 reads them), prose and a code fence around the array,
an invalid item, and cut-off replies (finish reason `length`). Every draw is a
hash of the auditee, the request and the sample, so a run is reproducible.
"""
from __future__ import annotations

import csv
import hashlib
import json
import re
from dataclasses import dataclass

from ingest.db import PROJECT_DIR
from ingest.llm.providers import Completion

ASSERTED = re.compile(r"Decision time point: (\d{4}-\d{2}-\d{2})")
LAP_DATE = re.compile(r"Between (\d{4}-\d{2}-\d{2}) and")
DOMAINS = ("demand", "supply", "monetary", "labor")


@dataclass(frozen=True)
class Auditee:
    key: str
    trigger: float
    reveal: float
    cutoff: str | None       # YYYY-MM, or None for a model that only guesses
    recall: float = 0.7
    quirks: bool = True      # trailing commas, prose, invalid items, cut-off replies
    trigger_years: tuple[str, ...] = ()   # the trigger fires in these years' crisis months only (all if empty)

    def uniform(self, *key: object) -> float:
        digest = hashlib.sha256("|".join(map(str, (self.key, *key))).encode()).hexdigest()
        return int(digest[:13], 16) / 16**13


AUDITEES = {sim.key: sim for sim in (
    Auditee("audit-trigger", trigger=0.30, reveal=0.10, cutoff="2024-06"),
    Auditee("audit-recall-only", trigger=0.0, reveal=0.05, cutoff="2023-04"),
    Auditee("audit-late", trigger=0.20, reveal=0.0, cutoff="2025-09"),
    Auditee("audit-guessing", trigger=0.0, reveal=0.0, cutoff=None, quirks=False),
    Auditee("audit-fragile", trigger=0.45, reveal=0.0, cutoff="2024-06", quirks=False, trigger_years=("2008", "2009")),
    Auditee("audit-trigger-bf16", trigger=0.12, reveal=0.10, cutoff="2024-06", quirks=False),
)}


def crisis_dates() -> set[str]:
    with (PROJECT_DIR / "seeds" / "hb_date_windows.csv").open(newline="") as handle:
        return {row["decision_date"] for row in csv.DictReader(handle) if row["date_window"] == "crisis"}


class SimulatedAuditee:
    """The runner's provider interface over an `Auditee`."""
    provider = "sim"
    base_url = None

    def __init__(self, name: str):
        self.auditee = AUDITEES[name]
        self.model = f"sim:{name}"
        self.crisis = crisis_dates()

    def arguments(self, settings) -> tuple[dict, list[str]]:
        return {"temperature": settings.temperature, "max_tokens": settings.max_tokens}, []

    async def complete(self, messages: list[dict], settings, context: dict | None = None) -> Completion:
        context = context or {}
        text = messages[-1]["content"]
        kind, draw_key = context["hb_kind"], (context["request_id"], context.get("sample", 0))
        if kind == "arm":
            reply, finish = self._sketches(text, context, draw_key)
        elif kind == "rec":
            reply, finish = self._rec(context, draw_key), "stop"
        else:
            reply, finish = self._lap(text, context, draw_key), "stop"
        return Completion(reply, self.model, len(text) // 4, max(1, len(reply) // 4), finish)

    async def close(self) -> None:
        return None

    def _sketches(self, text: str, context: dict, draw_key) -> tuple[str, str]:
        sim, date = self.auditee, context["decision_date"]
        asserted = ASSERTED.search(text)
        bearish = 0.30 + (0.25 if context.get("realized_direction") == -1 else 0.0)
        if asserted and asserted.group(1) in self.crisis and (not sim.trigger_years or asserted.group(1)[:4] in sim.trigger_years):
            bearish += sim.trigger
        if context.get("arm") == "R" and date in self.crisis:
            bearish += sim.reveal
        items = []
        for index in range(8):
            item = {"hypothesis_id": f"H_{index + 1:03d}", "dominant_domain": DOMAINS[index % 4],
                    "mechanism_narrative": f"{sim.key} simulated mechanism {index + 1}: a planted direction, not a real hypothesis.",
                    "direction": "-" if sim.uniform(*draw_key, index) < bearish else "+",
                    "candidate_proxies": ["UNRATE"], "candidate_horizon_hint": 20, "candidate_trigger": "none",
                    "candidate_interactions": False, "evidence_refs": ["series:UNRATE"],
                    "regime_hint": "simulated regime", "failure_condition": "simulated: never tested against data"}
            if sim.quirks and sim.uniform(*draw_key, index, "invalid") < 0.01:
                item["direction"] = "neutral"
            items.append(item)
        reply = json.dumps(items, indent=1)
        quirk = sim.uniform(*draw_key, "quirk") if sim.quirks else 1.0
        if quirk < 0.004:
            return reply[: len(reply) // 3], "length"             # ran out of tokens: no cell
        if quirk < 0.03:
            reply = reply.replace("\n]", ",\n]")                  # trailing comma: v1 fails, v2 reads it
        elif quirk < 0.05:
            reply = f"Here are the sketches.\n```json\n{reply}\n```"
        return reply, "stop"

    def _rec(self, context: dict, draw_key) -> str:
        sim, date = self.auditee, context["decision_date"]
        known = sim.cutoff is not None and date[:7] <= sim.cutoff
        year = int(date[:4])
        if not (known and sim.uniform(*draw_key, "rec") < 0.6):
            year = 2005 + int(sim.uniform(*draw_key, "rec-year") * 20)
        return json.dumps({"estimated_date": f"{year}-{date[5:7]}"})

    def _lap(self, text: str, context: dict, draw_key) -> str:
        sim = self.auditee
        date = LAP_DATE.search(text).group(1)
        draw = sim.uniform(*draw_key, "lap")
        if sim.cutoff is None:
            return "up" if draw < 0.5 else "down"
        if date[:7] <= sim.cutoff:
            truth = "down" if context.get("realized_direction") == -1 else "up"
            return truth if draw < sim.recall else "unknown"
        return ("up" if draw < 0.0025 else "down") if draw < 0.005 else "unknown"
