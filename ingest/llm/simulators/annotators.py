"""Simulated clinical annotators (labelled as such) who fill in validation packets at planted rates,
for the demo and for the estimator checks: each answers `yes` with the item's planted probability
(`na` for the trap of a question without one), and confirms the judge's score of a free response with
the planted probability (otherwise gives another score). Draws are a hash of the annotator, the item
and the seed, so a rerun fills in the same answers."""
from __future__ import annotations

import csv
import hashlib
from pathlib import Path

PLANTED = {"reasonable": 0.97, "agree_reference": 0.95, "agree_trap": 0.90, "judge": 0.85}


def _uniform(*key: object) -> float:
    return int(hashlib.sha256("|".join(map(str, key)).encode()).hexdigest()[:13], 16) / 16**13


def fill_packet(path: Path, traps: dict[str, bool], seed: int = 0, rates: dict | None = None) -> Path:
    """Answer every row of a packet CSV in place; `traps[question_id]` says whether it has a trap."""
    rates = {**PLANTED, **(rates or {})}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows, header = list(reader), list(reader.fieldnames or [])
    for row in rows:
        who, question = row["annotator"], row["question_id"]
        if "judge_model" in row:
            for part in ("accuracy", "htr"):
                judged = row[f"judge_{part}_score"]
                if judged in ("", None):
                    continue
                agree = _uniform("simulated-annotator", who, row["response_id"], part, seed) < rates["judge"]
                other = {"0.0": "1", "0.5": "0", "1.0": "0.5"}.get(str(float(judged)), "0")
                row[f"human_{part}_score"] = str(float(judged)) if agree else other
            continue
        for item in ("reasonable", "agree_reference", "agree_trap"):
            if item == "agree_trap" and not traps.get(question, False):
                row[item] = "na"
            else:
                row[item] = "yes" if _uniform("simulated-annotator", who, question, item, seed) < rates[item] else "no"
        row["comment"] = "simulated annotator"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    return path
