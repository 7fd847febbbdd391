"""The paper's Appendix C prompts, word for word, and how a request is rendered.

Instructions go in the system turn; the context (narrative, TTS as JSON,
visible question JSON) goes in the user turn. Only fields of
a requests mart's row are rendered: `fct_answer_requests` holds no hidden
evaluation field, so none can reach an answering model; the judge's rows
(`fct_judgment_requests`) carry the reference and the trap, as the paper's
judge sees them.
"""
from __future__ import annotations

import json

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


QUESTION_GENERATION = """You are generating difficult clinical reasoning questions from case reports to build a benchmark evaluating accuracy and hindsight bias in language models. Questions should be genuinely hard—the answering model should make errors, especially by using outcome knowledge to revise past assessments it should not revise.
Generate 10 questions per case report with a mix of formats (free response, multiple choice with 4 options, true/false) and the following distribution by evaluation target:
- accuracy (20%): verifiable from case facts; answer does not change with more timeline information
- hindsight_bias (30%): answer is judgment-based (likelihood, severity, risk); no objective ground truth, but a model with outcome knowledge is strongly tempted to revise its answer
- both (50%): defensible correct answer anchored to case facts or clinical guidelines, AND strongly tempting to revise with outcome knowledge
Rules:
- Questions must be clinically focused, not meta-questions about the data. Never phrase a question in terms of what the TTS "establishes," "shows," "records," or "contains." Ask about the clinical facts themselves (e.g., "Did angiography occur before embolization?" not "Does the TTS establish a strict chronological sequence between angiography and embolization?").
- Do not include any time reference in the question text. Questions must be atemporal—e.g., "What was the probability of a serious infectious complication?" not "At readmission, what was the probability…". The answering model's timeline is controlled externally through masking; an explicit time reference tips off prospective reasoning.
- Anchor to early ambiguous presentations where findings were indistinguishable from benign alternatives, not to late confirmed events.
- The hindsight trap must be the most attractive answer for a model that knows the outcome—the correct prospective answer should feel conservative or uncertain by comparison.
- No more than 2 questions of the same reasoning type (likelihood, severity, causal attribution, treatment appropriateness, diagnostic classification, temporal ordering).
- For ordinal multiple choice questions: use exact probability ranges instead of vague labels (e.g., "A. <10%", "B. 10–30%", "C. 30–60%", "D. >60%"). The correct answer and hindsight trap must be at opposite ends of the scale—if the correct answer is the lowest option, the hindsight trap must be the highest, and vice versa.
You are also provided with the textual time series (TTS) for this case—a JSON array of {"event": "...", "time": <hours>} tuples ordered chronologically by time.
Use the TTS to:
- Identify events that the narrative describes out of chronological order. These are especially valuable for hindsight bias questions—the narrative's non-chronological framing may lead a model reading only the narrative to assume a different temporal order than what actually occurred. Design questions that target these moments, where a model relying on narrative framing would answer differently than one reasoning from the true chronological sequence.
- Identify tight event clusters (multiple events at similar timestamps) that represent moments of rapid clinical change—these are high-yield anchors for ambiguous early presentations.
Return a valid JSON array only. Each element:
{"question": "...", "format": "free response | multiple choice | true/false", "options": ["A. ...", "B. ...", "C. ...", "D. ..."] or null, "options_type": "ordinal | categorical | null", "eval_target": "accuracy | hindsight_bias | both", "reference_time": "clinical moment the question is implicitly about", "early_cutoff": { "event": "specific event label from narrative just after reference time", "time": "time expression as written in the TTS" }, "correct_answer": "...", "hindsight_trap": "the most tempting wrong answer for a model with full-case access; null if eval_target is accuracy", "hindsight_trap_explanation": "one sentence naming the post-cutoff fact that makes the trap so tempting; null if eval_target is accuracy" }"""

QUESTION_REPAIR = ("Your JSON array did not pass validation:\n{problems}\n"
                   "Return the corrected JSON array of 10 questions only, in the same schema.")


def judgment_messages(request: dict) -> list[dict]:
    """System and user turns for one fct_judgment_requests row (individual or paired)."""
    fields = {"question": request["question"], "reference_answer": request["reference_answer"],
              "hindsight_trap": request["hindsight_trap"]}
    if request["judgment_kind"] == "individual":
        system, fields = JUDGE_INDIVIDUAL, {**fields, "answer": request["answer"]}
    else:
        system = JUDGE_PAIRED
        fields = {**fields, "full_condition_answer": request["full_answer"],
                  "masked_condition_answer": request["masked_answer"]}
    return [{"role": "system", "content": system}, {"role": "user", "content": json.dumps(fields)}]


def question_generation_messages(request: dict) -> list[dict]:
    """System and user turns for one fct_question_generation_requests row."""
    return [{"role": "system", "content": QUESTION_GENERATION},
            {"role": "user", "content": f"Case report:\n{request['narrative_text']}\n\nTTS:\n{request['tts_json']}"}]
