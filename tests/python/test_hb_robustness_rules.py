"""The robustness rules on small inputs (no warehouse): the balanced calm set's tie rule, the
perturbations' windows and their refusal of a stray event date, the LAP series and cutoff rule, the
transcript audit's anachronism exclusions, and the BM-2a verdict on the release's published numbers."""
from __future__ import annotations

import pandas as pd
import pytest

from ingest.stats.hb_robustness import (
    Lexicon,
    RepCounts,
    balanced_calm,
    cutoff,
    jackknife_seed,
    lap_series,
    perturbations,
    serving_verdict,
    transcript_audit,
)


def test_balanced_calm_takes_the_nearest_unused_date_and_the_earlier_on_a_tie():
    calm = ["2013-01-15", "2013-03-15", "2013-05-15"]
    # 2013-02-14 is 30 days from 01-15 and 29 from 03-15; 2013-04-14 then ties 03-15 (used) ... 05-15
    assert balanced_calm(calm, ["2013-02-14", "2013-04-14"]) == ["2013-03-15", "2013-05-15"]
    assert balanced_calm(calm, ["2013-02-14"]) == ["2013-03-15"]
    assert balanced_calm(["2013-01-01", "2013-01-03"], ["2013-01-02"]) == ["2013-01-01"]      # a tie: the earlier
    assert balanced_calm(["2013-01-01"], ["2013-01-02", "2013-01-05"]) == ["2013-01-01"]      # fewer calm dates: stops short


def _dates():
    rows = [("2008-09-15", "crisis", 1), ("2020-03-15", "crisis", 2), ("2013-01-15", "calm", 1), ("2014-01-15", "calm", 2),
            ("2006-01-15", None, None)]
    return pd.DataFrame([{"decision_date": d, "date_window": w, "window_position": p, "period": "pre"} for d, w, p in rows])


def test_perturbations_follow_the_seed_and_refuse_a_stray_event_date():
    specs = pd.DataFrame([
        {"position": 1, "perturbation": "none", "family": "none", "event": None, "calm_years": None, "with_ci": True},
        {"position": 2, "perturbation": "drop_GFC", "family": "drop_event", "event": "GFC", "calm_years": None, "with_ci": True},
        {"position": 3, "perturbation": "calm_2006_2014", "family": "calm_years", "event": None, "calm_years": "2006 2014",
         "with_ci": False},
        {"position": 4, "perturbation": "jack_drop", "family": "jackknife", "event": None, "calm_years": None, "with_ci": False}])
    events = pd.DataFrame([{"decision_date": "2008-09-15", "event": "GFC"}])
    plans = {p["perturbation"]: p for p in perturbations(_dates(), specs, events)}
    assert plans["drop_GFC"]["crisis"] == ["2020-03-15"] and plans["drop_GFC"]["with_ci"]
    assert plans["calm_2006_2014"]["calm"] == ["2006-01-15", "2014-01-15"]
    assert plans["jack_drop_2020-03-15"]["crisis"] == ["2008-09-15"] and not plans["jack_drop_2020-03-15"]["with_ci"]
    with pytest.raises(ValueError, match="not crisis dates"):
        perturbations(_dates(), specs, pd.DataFrame([{"decision_date": "2013-01-15", "event": "GFC"}]))
    with pytest.raises(ValueError, match="unknown family"):
        perturbations(_dates(), specs.assign(family="drop"), events)


def test_lap_series_pool_the_protocol_temperature_and_keep_others_apart():
    def lines(probe_set, temperature, reps, updown):
        return [{"probe_set": probe_set, "temperature": temperature, "decision_date": d, "rep": r, "n_lines": 1,
                 "n_updown": updown(d)} for d in ("2024-05-15", "2024-06-15") for r in reps]
    counts = pd.DataFrame(lines("protocol", None, range(4), lambda d: 1)
                          + lines("lap_sensitivity", 1.0, range(4, 8), lambda d: int(d < "2024-06"))
                          + lines("lap_sensitivity", 0.3, range(4), lambda d: 0))
    series = lap_series(counts, 1.0)
    assert sorted(series) == [(0.3, 4), (1.0, 4), (1.0, 8)]
    assert cutoff(RepCounts(series[(1.0, 4)]).lap(), 0.1) == "2024-06"
    assert RepCounts(series[(1.0, 8)]).lap().tolist() == [1.0, 0.5]
    assert cutoff(RepCounts(series[(0.3, 4)]).lap(), 0.1) is None
    assert RepCounts(series[(1.0, 8)]).lap({4, 5}).tolist() == [1.0, 0.0]          # a subset of rep ids
    assert jackknife_seed("gpt-5.4-mini") == 15282599900081290588                # the release's seed for that folder


def test_an_anachronism_is_a_later_year_outside_unit_and_snapshot_echoes():
    patterns = pd.DataFrame([
        {"pattern_set": "year", "pattern": r"\b(2008|2020)\b", "ignore_case": False},
        {"pattern_set": "event7", "pattern": "Lehman", "ignore_case": True},
        {"pattern_set": "event18", "pattern": "taper", "ignore_case": True},
        {"pattern_set": "monthyear", "pattern": r"\b(March)\s+(19|20)\d{2}\b", "ignore_case": False},
        {"pattern_set": "year_token", "pattern": r"\b((?:19|20)\d{2})\b", "ignore_case": False},
        {"pattern_set": "unit_echo", "pattern": r"(?:19|20)\d{2}\s+(?:chained\s+)?dollars", "ignore_case": True},
        {"pattern_set": "unit_echo", "pattern": r"=\s*(?:19|20)\d{2}(?:\.\d+)?", "ignore_case": False}])
    lexicon = Lexicon(patterns)
    assert not lexicon.anachronism("GDP in Chained 2017 Dollars; HOUST=2014.0", 2010)
    assert lexicon.anachronism("as in March 2020, LEHMAN fell", 2010)
    replies = pd.DataFrame([{"model_key": "m", "arm": "W", "decision_date": "2020-03-15", "replicate": 1,
                             "reply_text": "as in March 2020, LEHMAN fell"},
                            {"model_key": "m", "arm": "W", "decision_date": "2014-01-15", "replicate": 1,
                             "reply_text": "It is 2019; tapering ahead"}])
    nodes = pd.DataFrame([{"decision_date": "2020-03-15", "fake_date": "2010-09-15"},
                          {"decision_date": "2014-01-15", "fake_date": "2019-07-15"}])
    row = transcript_audit(replies, nodes, lexicon).iloc[0]
    assert (row.n_files, row.year_hits, row.event7_hits, row.event18_hits, row.monthyear_hits) == (2, 1, 1, 1, 1)
    assert (row.fake_year_hits, row.fake_year_files, row.true_year_hits, row.true_year_files, row.anachronism_hits) == (1, 2, 1, 2, 1)
    with pytest.raises(ValueError, match="no pattern_set 'unit_echo'"):
        Lexicon(patterns[patterns["pattern_set"] != "unit_echo"])


def test_a_pattern_set_hits_each_text_as_pythons_re_does_where_re2_would_read_it_otherwise():
    """Lexicon.hits runs RE2 over plain texts; where RE2 and re part (a Unicode digit for \\d, a \\v for
    \\s, `$` before a final newline, a lookahead RE2 refuses) it gives re's answer, text by text."""
    patterns = pd.DataFrame([
        {"pattern_set": name, "pattern": pattern, "ignore_case": ignore} for name, pattern, ignore in [
            ("year", r"\b\d{4}\b", False), ("event7", r"oil\sshock", True), ("event18", r"crisis$", False),
            ("monthyear", r"Lehman(?= fell)", True), ("year_token", r"\b((?:19|20)\d{2})\b", False),
            ("unit_echo", r"(?:19|20)\d{2}\s*[-–]\s*(?:19|20)\d{2}", False)]])
    lexicon = Lexicon(patterns)
    texts = ["in 2008 the OIL SHOCK", "year ٢٠٠٨ only", "oil\vshock", "a crisis\n", "a crisis",
             "a crisis here", "LEHMAN fell", "Lehman rose", "", "1982–1984=100", "tab\tand 2019"]
    for name in lexicon.sets:
        assert lexicon.hits(name, texts).tolist() == [lexicon.hit(name, t) for t in texts], name
    # the cases where the two engines part are among them: re's answer was kept
    assert lexicon.hits("year", texts)[1] and lexicon.hits("event7", texts)[2] and lexicon.hits("event18", texts)[3]


def test_serving_verdicts_of_the_published_bm2a_pairs():
    """serving_checker_demo.txt: fp8, bf16 and awq of qwen3.6-27b (E2 and CI, fractions)."""
    fp8, bf16, awq = (0.192708, 0.108427, 0.284564), (0.056155, -0.022966, 0.133759), (0.171717, 0.066035, 0.280014)
    verdict, reason = serving_verdict(fp8, bf16, 0.2)
    assert verdict == "UNSTABLE" and "containment" in reason
    assert serving_verdict(fp8, awq, 0.2) == ("STABLE", "CIs overlap, containment holds, |Delta| 2.1pp < half pooled CI width 9.8pp")
    assert serving_verdict(bf16, awq, 0.2)[0] == "UNSTABLE"
    assert serving_verdict((0.1, -0.2, 0.4), (0.1, -0.15, 0.3), 0.2)[0] == "UNDERPOWERED"      # spans zero, wide
    assert serving_verdict((0.10, 0.09, 0.30), (0.29, 0.08, 0.30), 0.2)[0] == "UNDERPOWERED"    # contained, too far apart
    assert serving_verdict((0.1, None, None), fp8, 0.2)[0] == "UNDERPOWERED"
    assert serving_verdict((0.0, -0.01, 0.02), (0.5, 0.4, 0.6), 0.2) == ("UNSTABLE", "95% CIs are disjoint")
