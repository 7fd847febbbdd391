"""The paper's design of a case's question set (§3.3, Appendix C generator prompt): ten questions,
2 `accuracy`, 3 `hindsight_bias` and 5 `both` (20/30/50%), a mix of the three formats, four
options for multiple choice, a trap that differs from the reference answer (and none for an
accuracy question), fields consistent with the eval target.

One definition serves two users: `hindsight generate questions` repairs or rejects a reply that
deviates, and `hindsight status` lists the deviations of the questions users loaded (a warning:
loaded questions are never rejected for their design).
"""
from __future__ import annotations

import json
import re
from collections import Counter

QUESTIONS_PER_CASE = 10
SPLIT = {"accuracy": 2, "hindsight_bias": 3, "both": 5}
FORMATS = ("free response", "multiple choice", "true/false")
OPTIONS = 4
LETTER = re.compile(r"^\s*\(?([A-Za-z])[.):]\s")


def _same_answer(a, b, options) -> bool:
    """Two answers name the same thing: equal text, or the same option letter of a multiple choice."""
    a, b = str(a).strip().casefold().rstrip("."), str(b).strip().casefold().rstrip(".")
    if a == b:
        return True
    if options:
        letter = lambda text: (LETTER.match(text + " ") or re.fullmatch(r"\(?([a-z])[.)]?", text))   # noqa: E731
        found_a, found_b = letter(a), letter(b)
        return bool(found_a and found_b and found_a.group(1) == found_b.group(1))
    return False


def question_deviations(q: dict) -> list[str]:
    """What one question does differently from the design (empty when nothing)."""
    out = []
    target, fmt = q.get("eval_target"), q.get("format")
    options = q.get("options")
    if isinstance(options, str):
        options = json.loads(options) if options.strip().startswith("[") else None
    trap, explanation = q.get("hindsight_trap"), q.get("hindsight_trap_explanation")
    if fmt == "multiple choice" and len(options or []) != OPTIONS:
        out.append(f"multiple choice with {len(options or [])} options instead of {OPTIONS}")
    if fmt != "multiple choice" and (options or q.get("options_type")):
        out.append(f"{fmt} question with options or options_type (they are for multiple choice only)")
    if target == "accuracy":
        if trap not in (None, "") or explanation not in (None, ""):
            out.append("accuracy question with a hindsight trap or explanation (both must be null)")
    else:
        if trap not in (None, "") and _same_answer(trap, q.get("correct_answer", ""), options):
            out.append("the hindsight trap is the reference answer")
        if explanation in (None, ""):
            out.append(f"{target} question without a hindsight_trap_explanation")
    return out


def case_deviations(questions: list[dict]) -> list[str]:
    """What a case's question set does differently from the design, as a whole."""
    out = []
    if len(questions) != QUESTIONS_PER_CASE:
        out.append(f"{len(questions)} questions instead of {QUESTIONS_PER_CASE}")
    targets = Counter(q.get("eval_target") for q in questions)
    if any(targets.get(target, 0) != n for target, n in SPLIT.items()):
        have = ", ".join(f"{targets.get(t, 0)} {t}" for t in SPLIT)
        want = ", ".join(f"{n} {t}" for t, n in SPLIT.items())
        out.append(f"eval targets {have} instead of {want}")
    missing = [f for f in FORMATS if f not in {q.get("format") for q in questions}]
    if missing:
        out.append(f"no {' and no '.join(missing)} question (the design mixes all three formats)")
    return out
