"""`hindsight simulate`: answer the requests mart with a simulated responder.

Reads `fct_answer_requests` (and the hidden fields the simulator needs from
`dim_questions`), writes condition-3 synthetic narratives for the simulator
into raw.synthetic_narratives, and loads the answers through the same path as
`hindsight load responses`, from a JSONL file kept beside the warehouse for
provenance. Run `hindsight build` before (requests) and after (scores).
"""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from ingest.errors import InputError
from ingest.load_jsonl import JsonlLoadResult
from ingest.load_responses import load_responses
from ingest.simulators import Simulator


def _require_marts(con) -> None:
    found = {r[0] for r in con.execute(
        "select table_name from information_schema.tables where table_schema = 'main'").fetchall()}
    missing = {"fct_answer_requests", "fct_narrative_requests", "dim_questions"} - found
    if missing:
        raise InputError("warehouse", f"marts {', '.join(sorted(missing))} are not built", "run `hindsight build` first")


def write_narratives(con, simulator: Simulator) -> int:
    """Synthetic narratives for every narrative scope this simulator lacks."""
    _require_marts(con)
    rows = con.execute("""
        select n.narrative_request_id, n.tts_lines from fct_narrative_requests n
        where not exists (select 1 from raw.synthetic_narratives s
                          where s.narrative_request_id = n.narrative_request_id and s.model = ?)
        order by n.narrative_request_id""", [simulator.name]).fetchall()
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    if rows:
        con.executemany("insert into raw.synthetic_narratives values (?, ?, ?, ?)",
                        [(rid, simulator.name, simulator.narrative(lines), now) for rid, lines in rows])
    return len(rows)


def simulate_answers(con, simulator: Simulator, out_dir: Path, seed: int = 0,
                     conditions: list[str] | None = None, variants: list[str] | None = None) -> JsonlLoadResult:
    _require_marts(con)
    where, params = ["(r.narrative_model is null or r.narrative_model = ?)"], [simulator.name]
    if conditions:
        where.append(f"r.condition in ({', '.join('?' * len(conditions))})")
        params += conditions
    if variants:
        where.append(f"r.prompt_variant in ({', '.join('?' * len(variants))})")
        params += variants
    cursor = con.execute(f"""
        select r.request_id, r.question_id, r.condition, r.visibility, r.prompt_variant,
               q.format, q.options_json, q.correct_answer, q.hindsight_trap
        from fct_answer_requests r inner join dim_questions q using (question_id)
        where {' and '.join(where)}
        order by r.request_id""", params)
    names = [d[0] for d in cursor.description]
    lines = []
    for row in cursor.fetchall():
        request = dict(zip(names, row))
        answer, evidence = simulator.answer(request, seed)
        lines.append(json.dumps({
            "question_id": request["question_id"], "model": simulator.name, "condition": request["condition"],
            "visibility": request["visibility"], "prompt_variant": request["prompt_variant"],
            "answer": answer, "evidence": evidence}, ensure_ascii=False))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / (re.sub(r"[^A-Za-z0-9_.@-]+", "_", simulator.name) + f"_seed{seed}.jsonl")
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return load_responses(con, path)
