"""HindsightBench reply parsers: the measurement instrument, versioned.

Sketch replies (arms): strip code fences; a reply that starts with neither `[`
nor `{` is scanned for every JSON value starting at a `[` or `{`, and the
longest list of objects wins (then the last object, then the largest value,
last a greedy `[...]`). Parser v1 then decodes; v2 (the release's disclosed
deviation of 2026-07-07) removes trailing commas and decodes again when v1
fails. A reply that is not a list is a parse error; an item is valid iff it is
an object with `direction` in {"+", "-"}, a string `mechanism_narrative`, a
list `candidate_proxies` and a string `regime_hint`.

REC replies: `estimated_date` of the JSON object; else the last
`(19|20)YY-MM` in the text (the bench runner's choice: reasoning preambles
mention many dates and the answer converges last; the FM-1c runner took the
first). LAP replies: permissive = the last `up|down|unknown` word of the
lower-cased text (the bench runner's); strict = the first whitespace token
stripped of `."'` (the FM-1c runner's); anything else is `invalid`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

PARSER_VERSIONS = ("v1", "v2")
NEWEST_PARSER = PARSER_VERSIONS[-1]
TRAILING_COMMA = re.compile(r",(\s*[}\]])")
REC_DATE = re.compile(r"(?:19|20)\d{2}-\d{2}")
LAP_WORD = re.compile(r"\b(up|down|unknown)\b")
OPENING_FENCE = re.compile(r"^```(?:json)?\s*")


def strip_fences(text: str) -> str:
    r"""TEXT stripped, without a Markdown code fence around it: the release's
    `re.sub(r"\s*```$", "", re.sub(r"^```(?:json)?\s*", "", text.strip()))`. The closing fence is cut
    by hand: that regex tries every position of a long reply (a third of the parser's time), and
    the text it reads ends in no space, so its match is the last three backticks and the spaces
    before them (`\s` and str.isspace are one set)."""
    inner = OPENING_FENCE.sub("", text.strip())
    return inner[:-3].rstrip() if inner.endswith("```") else inner


@dataclass(frozen=True)
class SketchParse:
    status: str                 # ok | parse_error
    valid_count: int
    invalid_count: int
    directions: str             # the valid items' directions in reply order, e.g. "+-++"
    error: str | None = None


def extract_sketch_json(text: str) -> str:
    """The JSON text a sketch reply is decoded from (fences stripped, prose around it skipped)."""
    stripped = strip_fences(text)
    if stripped.lstrip().startswith(("[", "{")):
        return stripped
    decoder, found, index = json.JSONDecoder(), [], 0
    while index < len(stripped):
        if stripped[index] in "[{":
            try:
                value, end = decoder.raw_decode(stripped, index)
            except json.JSONDecodeError:
                index += 1
                continue
            found.append(value)
            index = end          # past the whole value: nested brackets are not candidates
        else:
            index += 1
    object_lists = [v for v in found if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
    if object_lists:
        return json.dumps(max(object_lists, key=len))
    objects = [v for v in found if isinstance(v, dict)]
    if objects:
        return json.dumps(objects[-1])
    if found:
        return json.dumps(max(found, key=lambda v: len(json.dumps(v))))
    greedy = re.search(r"\[.*\]", stripped, re.S)
    return greedy.group(0) if greedy else stripped


def _valid(item) -> bool:
    return (isinstance(item, dict) and item.get("direction") in ("+", "-")
            and isinstance(item.get("mechanism_narrative"), str)
            and isinstance(item.get("candidate_proxies"), list)
            and isinstance(item.get("regime_hint"), str))


def parse_sketches(text: str, version: str = NEWEST_PARSER) -> SketchParse:
    """One arm reply read by parser `version` (v1 | v2)."""
    if version not in PARSER_VERSIONS:
        raise ValueError(f"unknown sketch parser {version!r}: use one of {', '.join(PARSER_VERSIONS)}")
    return parse_sketches_by_version(text)[PARSER_VERSIONS.index(version)]


def parse_sketches_by_version(text: str) -> tuple[SketchParse, ...]:
    """One arm reply read by every parser version (PARSER_VERSIONS' order), extracted and decoded
    once: v2 differs from v1 only where v1 cannot decode."""
    candidate = extract_sketch_json(text)
    try:
        v1 = _read(json.loads(candidate))
    except json.JSONDecodeError as error:
        v1 = SketchParse("parse_error", 0, 0, "", str(error))
        try:
            return v1, _read(json.loads(TRAILING_COMMA.sub(r"\1", candidate)))
        except json.JSONDecodeError as error2:
            return v1, SketchParse("parse_error", 0, 0, "", str(error2))
    return v1, v1


def _read(value) -> SketchParse:
    if not isinstance(value, list):
        return SketchParse("parse_error", 0, 0, "", "response is not a JSON array")
    valid = [item["direction"] for item in value if _valid(item)]
    return SketchParse("ok", len(valid), len(value) - len(valid), "".join(valid))


def parse_rec(text: str) -> str | None:
    """The estimated `YYYY-MM` of a date-recovery reply, or None."""
    try:
        value = json.loads(strip_fences(text))
        if isinstance(value, dict):
            estimate = value.get("estimated_date")
            return None if estimate is None else str(estimate)
    except json.JSONDecodeError:
        pass
    dates = REC_DATE.findall(text)
    return dates[-1] if dates else None


def parse_lap(text: str, mode: str = "permissive") -> str:
    """up | down | unknown | invalid."""
    if mode == "permissive":
        words = LAP_WORD.findall(text.lower())
        return words[-1] if words else "invalid"
    token = text.strip().lower().split()[0].strip('."\'') if text.strip() else ""
    return token if token in ("up", "down", "unknown") else "invalid"
