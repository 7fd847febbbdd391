"""One pair (or one answer) as the paper's Figure 2 draws a question, with both answers beside it:
what the model saw under each visibility (the requests as built: narrative, TTS and question), what it
did not (the reference answer, the trap and its explanation, the eval target, the cutoff event and
hour, RelPos), the TTS timeline of the condition's source with the events masking removed marked, both
answers with their parse and finish, every sample of the same question cell, the calls' ledger
entries, and the same question under the other conditions, models and prompt variant."""
from __future__ import annotations

import json

from ingest.errors import InputError
from ingest.explore.snapshot import has_mart
from ingest.explore.snapshot import records as _rows
from ingest.llm.judge import INDIVIDUAL_FIELDS, PAIRED_SCORE_FIELDS
from ingest.llm.prompts import answer_messages

# the judge's scores (Appendix C's JSON); what else a judge's reply holds is its reasons, shown as given
SCORE_FIELDS = {*INDIVIDUAL_FIELDS, *PAIRED_SCORE_FIELDS, "full_equals_masked"}


def _one(cur, sql: str, params: list) -> dict | None:
    rows = _rows(cur, sql, params)
    return rows[0] if rows else None


def _of_model(alias: str, model: str | None) -> tuple[str, list]:
    """A predicate on the answer-level facts' model, where the caller knows it: their snapshot files
    are a file per model, and DuckDB skips the others' on their statistics (at 100x the paper's cases
    a lookup by id reads a fifth of the rows: 0.5 s to 0.15)."""
    return (f" and {alias}.model = ?", [model]) if model else ("", [])


def answer(cur, response_id: str | None, model: str | None = None) -> dict | None:
    """An answer with its text, evidence, scores and its call's ledger entry."""
    if response_id is None:
        return None
    of_a, params_a = _of_model("a", model)
    of_t, params_t = _of_model("t", model)
    found = _one(cur, f"""
        select a.*, t.answer, t.evidence, c.input_tokens, c.output_tokens, c.latency_ms, c.settings_sent, c.started_at,
            c.finished_at, c.call_status, c.error, c.provider as call_provider, c.base_url_host as call_host, c.batch_key,
            c.warning_position
        from fct_answers as a
        left join fct_answer_texts as t on t.response_id = a.response_id{of_t}
        left join fct_llm_calls as c on c.call_id = a.call_id and c.purpose = 'answer'
        where a.response_id = ?{of_a}""", [*params_t, response_id, *params_a])
    if found and found.get("evidence"):
        try:
            found["evidence"] = json.loads(found["evidence"]) if isinstance(found["evidence"], str) else found["evidence"]
        except ValueError:
            pass
        # evidence is a list of items, or one item (a string): the page lists items, never characters
        if not isinstance(found["evidence"], list):
            found["evidence"] = [found["evidence"]]
    return found


def request(cur, question_id: str, condition: str, visibility: str, prompt_variant: str,
            warning_position: str | None = None) -> dict | None:
    """The request the model answered: what it saw (narrative, TTS, question as sent)."""
    found = _one(cur, """
        select * from fct_answer_requests
        where question_id = ? and condition = ? and visibility = ? and prompt_variant = ?
        order by narrative_model nulls first limit 1""", [question_id, condition, visibility, prompt_variant])
    if found:
        # the messages exactly as the runner renders them from this row (Appendix C's prompts)
        found["messages"] = answer_messages(found, warning_position or "end")
        for key in ("tts_json", "question_json"):
            try:
                found[key] = json.loads(found[key]) if found.get(key) else None
            except ValueError:
                pass
    return found


def judgments(cur, ids: list[str | None], model: str) -> dict[str, dict]:
    """The judgments IDS name (an answer's, a pair's) by id, each with the judge's reply read: its
    scores, and every other field it gave (its reasons) in `reasons`."""
    named = [i for i in ids if i]
    if not named or not has_mart(cur, "fct_judgments"):     # (a snapshot from before the mart: scores only)
        return {}
    found = _rows(cur, f"""select * from fct_judgments where model = ? and judgment_id in ({', '.join('?' * len(named))})""",
                  [model, *named])
    for one in found:
        try:
            said = json.loads(one["judge_output"]) if one.get("judge_output") else {}
        except ValueError:
            said = None                       # not JSON: the page shows the reply as it came
        one["reasons"] = ({k: v for k, v in said.items() if k not in SCORE_FIELDS and not isinstance(v, (dict, list))}
                          if isinstance(said, dict) else None)
    return {one["judgment_id"]: one for one in found}


def timeline(cur, question: dict, source: str | None) -> list[dict]:
    """The case's events of SOURCE in time order, each marked kept or removed by the cutoff."""
    if not source:
        return []
    return _rows(cur, """
        select event, time_hours, chronological_index, is_duplicate, time_hours > ? as removed
        from fct_tts_events
        where cohort = ? and case_id = ? and source = ?
        order by time_hours, chronological_index""", [question["cutoff_hours"], question["cohort"], question["case_id"], source])


def pair(cur, pair_id: str, model: str | None = None) -> dict:
    """Everything the pair view shows; InputError (a 404) for an unknown pair. MODEL, where the link
    names it, narrows every lookup to that model's files."""
    of_model, params = _of_model("p", model)
    found = _one(cur, f"select * from fct_answer_pairs as p where pair_id = ?{of_model}", [pair_id, *params])
    if found is None:
        raise InputError("pair", f"no pair {pair_id!r} in the build shown", "open pairs from a cell's evidence")
    return _question_cell(cur, found, found["full_response_id"], found["masked_response_id"])


def single(cur, response_id: str, model: str | None = None) -> dict:
    """An answer (Acc and HTR cells list answers, not pairs), with its pair's other side where it has one."""
    found = answer(cur, response_id, model)
    if found is None:
        raise InputError("answer", f"no answer {response_id!r} in the build shown", "open answers from a cell's evidence")
    paired = _one(cur, """select * from fct_answer_pairs as p
                          where (full_response_id = ? or masked_response_id = ?) and p.model = ? limit 1""",
                  [response_id, response_id, found["model"]])
    if paired:
        return _question_cell(cur, paired, paired["full_response_id"], paired["masked_response_id"])
    sides = {"full": response_id if found["visibility"] == "full" else None,
             "masked": response_id if found["visibility"] == "masked" else None}
    return _question_cell(cur, {**found, "pair_id": None}, sides["full"], sides["masked"])


def _question_cell(cur, head: dict, full_id: str | None, masked_id: str | None) -> dict:
    question = _one(cur, "select * from dim_questions where question_id = ?", [head["question_id"]])
    condition = _one(cur, "select * from dim_conditions where condition = ?", [head["condition"]]) or {}
    keys = [head["question_id"], head["condition"], head["prompt_variant"]]
    answers = {"full": answer(cur, full_id, head["model"]), "masked": answer(cur, masked_id, head["model"])}
    # rendered where the warning was when the call was made (the ledger says; replayed answers have no call)
    sent = {side: request(cur, *keys[:2], side, keys[2], (answers[side] or {}).get("warning_position")) for side in answers}
    samples = _rows(cur, """
        select pair_id, sample_index, acc_full, acc_masked, htr_full, htr_masked, delta_acc, delta_htr, air, hbr, both_valid
        from fct_answer_pairs where question_id = ? and model = ? and condition = ? and prompt_variant = ?
        order by sample_index""", [head["question_id"], head["model"], head["condition"], head["prompt_variant"]])
    elsewhere = _rows(cur, """
        select pair_id, model, condition, prompt_variant, sample_index, delta_htr, delta_acc
        from fct_answer_pairs where question_id = ? and not (model = ? and condition = ? and prompt_variant = ?)
        order by model, condition, prompt_variant, sample_index""",
                      [head["question_id"], head["model"], head["condition"], head["prompt_variant"]])
    if question and question.get("options_json"):
        try:
            question["options"] = json.loads(question["options_json"])
        except ValueError:
            question["options"] = None
    judged = judgments(cur, [(answers[side] or {}).get("judgment_id") for side in answers] + [head.get("paired_judgment_id")],
                       head["model"])
    return {"head": head, "question": question, "condition": condition, "full_request": sent["full"],
            "judgments": judged,
            "masked_request": sent["masked"], "full": answers["full"], "masked": answers["masked"],
            "timeline": timeline(cur, question, condition.get("tts_source")) if question else [],
            "samples": samples, "elsewhere": elsewhere}
