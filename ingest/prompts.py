"""The paper's Appendix C prompts, word for word, and how a request is rendered.

Instructions go in the system turn; the context (narrative, TTS as JSON,
visible question JSON) goes in the user turn. Only fields of
`fct_answer_requests` are rendered, so no hidden evaluation field can reach a
request body.
"""
from __future__ import annotations

PROMPT_TEMPLATE_VERSION = "appendix-c-1"

_ANSWER_RULES = """Rules:
- If "format" is "true/false", answer exactly "true" or "false".
- If "format" is "multiple choice", answer with exactly one option string from "options", including the option letter and text.
- If "format" is "free response", answer concisely in one to three sentences.
- Always include an "evidence" field explaining why you gave the answer.
- {evidence}
- Do not include reasoning, citations, markdown, or extra text outside the JSON.
Return only valid JSON in this exact shape:
```
{{"answer": "...", "evidence": "..."}}
```"""

ANSWER_CONDITION_0 = """You answer clinical reasoning questions using only the provided case report.
For each request, you will receive:
1. A case report.
2. One JSON question object containing only these fields: "question", "format", and "options".
Answer only from the visible case report and the visible question object. Use general medical knowledge only to interpret clinical language, not to invent patient-specific facts.
""" + _ANSWER_RULES.format(evidence="The evidence should be a concise case-grounded rationale, ideally naming the relevant event, symptom, test, treatment, timing, or absence of needed information from the case report.")

ANSWER_CONDITIONS_1_3 = """You answer clinical reasoning questions using the provided case report and its textual time series (TTS).
For each request, you will receive:
1. A case report.
2. A TTS—a JSON array of {"event": "...", "time": <hours>} tuples ordered chronologically by time relative to an arbitrary anchor event.
3. One JSON question object containing only these fields: "question", "format", and "options".
Answer using both the case report and the TTS. When they conflict, trust the TTS for event ordering and timing, and the narrative for clinical detail.
Use general medical knowledge only to interpret clinical language, not to invent patient-specific facts.
""" + _ANSWER_RULES.format(evidence="The evidence should be a concise rationale grounded in the case report or TTS, naming the relevant event, timestamp, symptom, test, treatment, or absence of needed information.")

ANSWER_CONDITION_2 = """You answer clinical reasoning questions using only the provided textual time series (TTS).
For each request, you will receive:
1. A TTS—a JSON array of {"event": "...", "time": <hours>} tuples ordered chronologically by time relative to an arbitrary anchor event.
2. One JSON question object containing only these fields: "question", "format", and "options".
Answer using only the TTS. Use general medical knowledge only to interpret clinical language, not to invent patient-specific facts.
""" + _ANSWER_RULES.format(evidence="The evidence should be a concise rationale grounded in the TTS, naming the relevant event, timestamp, or absence of needed information.")

HINDSIGHT_WARNING = ("Use your medical expertise for this reasoning task; do not let hindsight cloud your judgment. "
                     "Use only knowledge available at the time; do not let the final outcome of the case affect your answer.")

SYNTHETIC_NARRATIVE = """You are a medical expert tasked with reconstructing a synthetic clinical case report from a patient timeline presented in textual time-series (TTS) format. The input contains two columns: event and time in hours, where the timeline conventions are as follows: Time 0 represents the patient's hospital admission; events occurring before admission have negative time values and events occurring after admission have positive time values.
Guidelines:
- Use clinical and natural language to convert fragmented timeline entries into a readable narrative.
- Follow the order in which events appear in the TTS file as the narrative sequence.
- Central events include: symptom onset or major clinical changes; hospital admission, transfer, discharge, or death; diagnostic tests and clinically significant results; diagnoses; procedures and interventions; medication initiation, discontinuation, or major adjustment; complications and treatment responses.
- Express the timing of central events relative to nearby central events (e.g., "two weeks after that," "one month after presentation," "shortly after admission") using any unit of time (hours, days, weeks, months, years) that is the most natural to read.
- Use a standalone or absolute timepoint only when there is no clear anchoring event or when it is clearer than a relative phrase.
- Include only information explicitly supported by the input timeline.
- Do not infer, invent, or add diagnoses, symptoms, treatments, results, outcomes, demographic details, or causal relationships that are not documented.
- When the timeline is ambiguous or incomplete, report the information conservatively without any speculation.
Output Requirements:
Return only the synthetic clinical case report. Do not include headings about the task, explanations, notes, disclaimers, or commentary outside the report.
Example input:
42-year-old | 0
female | 0
no pathological history | 0
consulted the rheumatology clinic | 0
initiated subcutaneous semaglutide for weight loss | -1008
starts complaining of myalgia | -672
edema in the four limbs | -672
review of symptoms was negative | -672
new contrast MRI took place | +730
notable decrease in inflammatory changes in the limb muscles | +730
Example output:
A 42-year-old female patient with no pathological history consulted the rheumatology clinic. Six weeks before the consultation, she had initiated subcutaneous semaglutide for weight loss. Two weeks after that, she starts complaining of myalgia and edema in the four limbs. The review of symptoms by systems was negative. One month after presentation, a new contrast MRI showed a notable decrease in the extent of inflammatory changes in the limb muscles."""

JUDGE_INDIVIDUAL = """You are evaluating an answer to a clinical temporal-QA question.
Return only JSON. Decide clinical meaning, not exact wording.
- accuracy_score must be 1 for fully correct, 0.5 for partially correct, and 0 for incorrect.
- htr_score must be 1 if the answer fully matches the hindsight_trap, 0.5 if it partially reflects the hindsight trap, and 0 if it does not reflect the trap.
- If hindsight_trap is null, htr_score must be 0."""

JUDGE_PAIRED = """You are evaluating paired answers to a clinical temporal-QA question.
Return only JSON. Decide clinical meaning, not exact wording.
- full_equals_masked is true if the full-condition and masked-condition answers mean the same thing clinically.
- For full_accuracy_score and masked_accuracy_score, use 1 for fully correct, 0.5 for partially correct, and 0 for incorrect.
- For full_htr_score and masked_htr_score, use 1 if the answer fully matches the hindsight_trap, 0.5 if it partially reflects the hindsight trap, and 0 if it does not reflect the trap.
- If hindsight_trap is null, both HTR scores and hbr_score must be 0.
- For hbr_score, give hindsight-bias credit only to the extent that the masked answer is correct and the full answer reflects the trap; use 1, 0.5, or 0."""


def answer_instructions(condition: str, variant: str = "standard", warning_position: str = "end") -> str:
    base = {"0": ANSWER_CONDITION_0, "2": ANSWER_CONDITION_2}.get(condition.split(".")[0], ANSWER_CONDITIONS_1_3)
    if variant == "warning":
        return f"{HINDSIGHT_WARNING}\n{base}" if warning_position == "start" else f"{base}\n{HINDSIGHT_WARNING}"
    return base


def answer_messages(request: dict, warning_position: str = "end") -> list[dict]:
    """System and user turns for one fct_answer_requests row (visible fields only)."""
    parts = []
    if request.get("narrative"):
        parts.append(f"Case report:\n{request['narrative']}")
    if request["condition"] != "0":
        parts.append(f"TTS:\n{request['tts_json']}")
    parts.append(f"Question:\n{request['question_json']}")
    return [
        {"role": "system", "content": answer_instructions(request["condition"], request["prompt_variant"], warning_position)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def narrative_messages(tts_lines: str) -> list[dict]:
    return [{"role": "system", "content": SYNTHETIC_NARRATIVE}, {"role": "user", "content": tts_lines}]
