"""The writers `hindsight batches collect` stores each purpose's results with: the commands' own
(answers, narratives, judgments, HindsightBench replies), handed to the batch path, which imports
none of the commands (so imports in ingest/llm point one way)."""
from __future__ import annotations

from types import SimpleNamespace

from ingest.llm.answer import answer_writer, narrative_writer
from ingest.llm.hb_audit_runner import audit_writer, registered_key
from ingest.llm.judge import judgment_writer


def writers_for(con, model: str, provider: str, base_url: str | None) -> dict:
    """Each batch purpose's writer for one model's batches."""
    origin = SimpleNamespace(provider=provider, base_url=base_url)
    audit = audit_writer(con, model, registered_key(con, model))
    return {"answer": answer_writer(con, model, origin), "narrative": narrative_writer(con, model),
            "judge": judgment_writer(con, model), "hb_arm": audit, "hb_rec": audit, "hb_lap": audit}
