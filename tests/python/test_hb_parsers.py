"""The reply parsers' fence stripping equals the release's regex expression on every text (it is cut
by hand for speed): random texts over the characters where the two could part."""
from __future__ import annotations

import random
import re

from ingest.stats.hb_parsers import parse_rec, strip_fences


def release_strip(text: str) -> str:
    return re.sub(r"\s*```$", "", re.sub(r"^```(?:json)?\s*", "", text.strip()))


def test_fences_are_stripped_as_the_release_strips_them():
    rng = random.Random(7)
    # backtick runs, ASCII and Unicode spaces (\u2003, \x1c, \x85 and \v are whitespace to both), JSON
    pieces = ["`", "``", "```", "````", " ", "\n", "\t", "json", "{", "}", "a", "\u2003", "\x1c", "\x85", "\v"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(50_000)]
    texts += ["```json\n{\"estimated_date\": \"2019-04\"}\n```", "```\n```", "```", "x ```", "````", " \n``` \n"]
    assert [strip_fences(t) for t in texts] == [release_strip(t) for t in texts]
    assert parse_rec("```json\n{\"estimated_date\": \"2019-04\"}\n  ```") == "2019-04"
