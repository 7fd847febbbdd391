"""The question rows behind a comparison's cell, sorted by where the two arms differ: each question
both arms have a value of, the two values, their difference, and a sample of each side to open."""
from __future__ import annotations

from ingest.explore.evidence import Cell, cell_sql
from ingest.explore.snapshot import records
from ingest.publish.compare import COMPARABLE, GRAIN
from ingest.publish.semantic import Dimension, SemanticLayer

LIMIT = 200


def questions(cur, layer: SemanticLayer, cell: Cell, compared: tuple[Dimension, str, str]) -> list[dict]:
    """The LIMIT question rows of CELL (its dimensions without the compared one) where the arms differ
    most, then the rest in question order."""
    dimension, a, b = compared
    rows, params = cell_sql(layer, cell, also=(dimension,))
    metric = cell.metric
    column = COMPARABLE[dimension.name]
    match = [c for c in GRAIN if c != column]
    joined = " and ".join(f"a.{c} = b.{c}" for c in match)
    sample = ("(select min(pair_id) from fct_answer_pairs as p where p.question_id = {s}.question_id and p.model = {s}.model "
              "and p.condition = {s}.condition and p.prompt_variant = {s}.prompt_variant)") if "paired" in metric.visibilities else (
              "(select min(response_id) from fct_answers as r where r.question_id = {s}.question_id and r.model = {s}.model "
              "and r.condition = {s}.condition and r.prompt_variant = {s}.prompt_variant and r.visibility = {s}.visibility "
              "and r.is_latest_in_cell)")
    return records(cur, f"""
        with arms as (
            select *, cast("{dimension.name}" as varchar) as arm, {metric.numerator} / {metric.denominator} as value
            from ({rows}) where {metric.denominator} > 0)
        select a.question_id, q.question, a.cohort, a.case_id, {', '.join(f'a.{c}' for c in match if c != 'question_id')},
            a.value as value_a, b.value as value_b, a.value - b.value as difference, a.model as model_a, b.model as model_b,
            {sample.format(s='a')} as open_a, {sample.format(s='b')} as open_b
        from arms as a
        inner join arms as b on {joined}
        inner join dim_questions as q on q.question_id = a.question_id
        where a.arm = ? and b.arm = ?
        order by abs(a.value - b.value) desc, a.question_id
        limit {LIMIT}""", [*params, a, b])
