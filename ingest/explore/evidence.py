"""The rows behind a number: a cell of `hindsight metrics` (a metric, its dimensions' values, the
slice's --where) as the question rows of fct_metric_parts it sums and the samples (pairs, or answers)
under them, with what the explorer filters, sorts, searches and pages by.

A cell is selected exactly as slices.py selects it: the same slice rows (slice_rows_sql), the same
checked --where, each dimension equal to the cell's value (NULL matching NULL). So the question rows
listed are the cell's n_questions (those with a value) and the samples its n_answers, and the estimate
recomputed from them, sum(<metric>_sum) / sum(<metric>_n), is the cell's.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from ingest.errors import InputError
from ingest.explore.snapshot import records
from ingest.publish.semantic import Dimension, Metric, SemanticLayer
from ingest.publish.slices import KEPT, slice_rows_sql
from ingest.publish.where import Condition

PAGE = 50
# a pair's flip: how the full answer differs from the masked one (right: Acc 1; trap: HTR 1)
FLIP = """case
    when p.acc_full is null and p.acc_masked is null and p.htr_full is null and p.htr_masked is null then 'not scored'
    when p.air = 0 then 'unchanged'
    when p.acc_masked = 1 and p.htr_full = 1 then 'masked right → full trap'
    when p.acc_masked = 1 and coalesce(p.acc_full, 0) < 1 then 'masked right → full other'
    when p.acc_full = 1 and coalesce(p.acc_masked, 0) < 1 then 'masked wrong → full right'
    when p.htr_full = 1 and coalesce(p.htr_masked, 0) < 1 then 'masked wrong → full trap'
    when p.htr_masked = 1 and coalesce(p.htr_full, 0) < 1 then 'masked trap → full other'
    else 'changed, same scores' end"""
FLIPS = ("masked right → full trap", "masked right → full other", "masked wrong → full trap", "masked wrong → full right",
         "masked trap → full other", "changed, same scores", "unchanged", "not scored")
# what a list can be filtered by (the URL's parameter: the column), sorted by, and searched in
FILTERS = {"flip": "flip", "format": "format", "options_type": "options_type", "relpos_band": "relpos_band",
           "parse_status": "parse_status", "finish_reason": "finish_reason", "judge": "judge_model", "verdict": "verdict"}
# a judged sample's verdict: the judge's scores, full / masked (free responses; NULL for the others)
VERDICT = """case when {judge} is not null then
    'Acc ' || coalesce(cast(acc_full as varchar), '—') || ' / ' || coalesce(cast(acc_masked as varchar), '—')
    || ' · HTR ' || coalesce(cast(htr_full as varchar), '—') || ' / ' || coalesce(cast(htr_masked as varchar), '—') end"""
SORTS = {"question": "question_id, model, condition, prompt_variant, sample_index", "value": "value desc nulls last, question_id",
         "relpos": "relpos nulls last, question_id", "case": "cohort, case_id, question_id"}
SEARCHED = ("question", "answer", "full_answer", "masked_answer")


@dataclass
class Cell:
    metric: Metric
    dimensions: list[Dimension]
    values: dict[str, str | None]          # each dimension's value as text (url_value; None: NULL)
    condition: Condition | None
    by: list[str] = field(default_factory=list)      # the slice's dimensions as the URL named them
    where: str | None = None                         # the slice's --where as given

    @property
    def paired(self) -> bool:
        return "paired" in self.metric.visibilities


@dataclass
class ListRequest:
    filters: dict[str, str] = field(default_factory=dict)
    sort: str = "question"
    search: str = ""
    page: int = 1


def cell_sql(layer: SemanticLayer, cell: Cell, also: tuple[Dimension, ...] = ()) -> tuple[str, list]:
    """The cell's question rows (fct_metric_parts' with the dimensions, and ALSO's, not fixed: a
    comparison's), and the parameters."""
    rows = slice_rows_sql(layer, [*cell.dimensions, *also], set(cell.condition.columns) if cell.condition else set())
    visibilities = ", ".join(f"'{v}'" for v in cell.metric.visibilities)
    # compared as text, as a URL carries them (url_value renders each value as DuckDB does)
    tests = [f'cast("{d.name}" as varchar) is not distinct from ?' for d in cell.dimensions]
    kept = " and ".join([f"visibility in ({visibilities})", *([f"({cell.condition.sql})"] if cell.condition else []), *tests])
    return f"select * from ({rows}) where {kept}", [cell.values.get(d.name) for d in cell.dimensions]


def summary(cur, layer: SemanticLayer, cell: Cell) -> dict:
    """The cell's estimate and counts recomputed from its question rows."""
    sql, params = cell_sql(layer, cell)
    m = cell.metric
    row = cur.execute(f"""
        select sum({m.numerator}) / nullif(sum({m.denominator}), 0), cast(sum({m.denominator}) as bigint),
            count(distinct case when {m.denominator} > 0 then cohort || '/' || case_id end), cast(sum(n_answers) as bigint),
            cast(sum({m.valid}) as bigint), count(*)
        from ({sql})""", params).fetchone()
    return dict(zip(["estimate", "n_questions", "n_cases", "n_answers", "n_valid", "n_rows"], row))


def _model_literal(cell: Cell) -> str | None:
    """The cell's model as an SQL literal (sqlglot's), where the cell fixes one."""
    model = cell.values.get("model")
    return exp.Literal.string(model).sql(dialect="duckdb") if model is not None else None


def _items_sql(cell: Cell, question_rows: str) -> str:
    """One row per sample of the cell's question rows: a pair (paired metrics) or an answer. Where the
    cell fixes the model, every answer-level fact is read for that model only: their snapshot files are
    a file per model, and DuckDB skips the others' on their statistics."""
    metric = cell.metric.name
    model = _model_literal(cell)
    of = (lambda alias: f" and {alias}.model = {model}") if model else (lambda alias: "")
    if cell.paired:
        return f"""
            select p.pair_id as id, 'pair' as kind, p.cohort, p.case_id, p.question_id, p.model, p.condition, p.prompt_variant,
                'paired' as visibility, p.sample_index, p.format, p.options_type, r.relpos, r.relpos_band, {FLIP} as flip,
                p.{metric} as value, r.{cell.metric.denominator} > 0 as has_value, p.both_valid as valid,
                p.acc_full, p.acc_masked, p.htr_full, p.htr_masked,
                case when af.parse_status = am.parse_status then af.parse_status
                     else coalesce(af.parse_status, '?') || ' | ' || coalesce(am.parse_status, '?') end as parse_status,
                case when af.finish_reason is not distinct from am.finish_reason then af.finish_reason
                     else coalesce(af.finish_reason, '?') || ' | ' || coalesce(am.finish_reason, '?') end as finish_reason,
                coalesce(p.paired_judge_model, af.judge_model, am.judge_model) as judge_model,
                p.full_response_id, p.masked_response_id
            from ({question_rows}) as r
            inner join fct_answer_pairs as p
                on p.question_id = r.question_id and p.model = r.model and p.condition = r.condition
                and p.prompt_variant = r.prompt_variant{of("p")}
            left join fct_answers as af on af.response_id = p.full_response_id{of("af")}
            left join fct_answers as am on am.response_id = p.masked_response_id{of("am")}"""
    return f"""
        select a.response_id as id, 'answer' as kind, a.cohort, a.case_id, a.question_id, a.model, a.condition, a.prompt_variant,
            a.visibility, a.sample_index, a.format, a.options_type, r.relpos, r.relpos_band, a.parse_status as flip,
            a.{metric} as value, r.{cell.metric.denominator} > 0 as has_value,
            a.parse_status not in ('invalid', 'truncated') as valid,
            a.acc as acc_full, null::double as acc_masked, a.htr as htr_full, null::double as htr_masked,
            a.parse_status, a.finish_reason, a.judge_model, a.response_id as full_response_id, null as masked_response_id
        from ({question_rows}) as r
        inner join fct_answers as a
            on a.question_id = r.question_id and a.model = r.model and a.condition = r.condition
            and a.prompt_variant = r.prompt_variant and a.visibility = r.visibility{of("a")}
        where a.is_latest_in_cell"""


def items(cur, layer: SemanticLayer, cell: Cell, ask: ListRequest) -> dict:
    """A page of the cell's samples, filtered, searched and sorted, with the total that match and the
    values the filters can take. The cell's samples are gathered once, into a temporary table of the
    request's own cursor, and counted, paged and listed from there."""
    sql, params = _samples_sql(layer, cell)
    cur.execute(f"create or replace temp table cell_samples as {sql}", params)
    try:
        return _page(cur, ask)
    finally:
        cur.execute("drop table if exists cell_samples")


def _page(cur, ask: ListRequest) -> dict:
    tests, values = [], []
    for name, value in ask.filters.items():
        if name not in FILTERS:
            raise InputError(name, "not a filter of this list", f"filter by {', '.join(FILTERS)}")
        tests.append(f"cast({FILTERS[name]} as varchar) = ?")
        values.append(value)
    if ask.search:
        tests.append("(" + " or ".join(f"contains(lower(coalesce({c}, '')), ?)" for c in ("question", "full_answer", "masked_answer"))
                     + ")")
        values += [ask.search.lower()] * 3
    where = f"where {' and '.join(tests)}" if tests else ""
    order = SORTS.get(ask.sort)
    if order is None:
        raise InputError("sort", f"{ask.sort!r} is not a sort of this list", f"sort by {', '.join(SORTS)}")
    total, = cur.execute(f"select count(*) from cell_samples {where}", values).fetchone()
    pages = max(1, -(-total // PAGE))
    if ask.page < 1 or ask.page > pages:
        raise InputError("page", f"page {ask.page} of {pages}", f"ask for a page from 1 to {pages}")
    rows = records(cur, f"select * from cell_samples {where} order by {order} limit {PAGE} offset {(ask.page - 1) * PAGE}",
                   values)
    # the values each filter can take, in one pass over the cell's samples
    lists = cur.execute("select " + ", ".join(f"list(distinct cast({c} as varchar) order by cast({c} as varchar))"
                                              for c in FILTERS.values()) + " from cell_samples").fetchone()
    options = {name: [v for v in (values or []) if v is not None] for name, values in zip(FILTERS, lists)}
    return {"rows": rows, "total": total, "page": ask.page, "pages": pages, "options": options}


def cell_where(cell: Cell) -> str:
    """The slice's --where and the cell's own values as one condition (sqlglot renders the values:
    no text from a URL is pasted into it), so that a slice of it has the one cell."""
    tests = [exp.Is(this=exp.column(d.name, quoted=True), expression=exp.Null()) if cell.values[d.name] is None
             else exp.EQ(this=exp.Cast(this=exp.column(d.name, quoted=True), to=exp.DataType.build("varchar")),
                         expression=exp.Literal.string(cell.values[d.name]))
             for d in cell.dimensions]
    condition = exp.and_(*([exp.Paren(this=sqlglot.parse_one(cell.condition.sql, read="duckdb"))] if cell.condition else []), *tests)
    return condition.sql(dialect="duckdb")


def _samples_sql(layer: SemanticLayer, cell: Cell) -> tuple[str, list]:
    """The cell's samples with what the page shows of each: the judge's verdict, the question and both
    answers' texts."""
    question_rows, params = cell_sql(layer, cell)
    model = _model_literal(cell)
    of = (lambda alias: f" and {alias}.model = {model}") if model else (lambda alias: "")
    return f"""
        with samples as ({_items_sql(cell, question_rows)})
        select s.*, {VERDICT.format(judge='s.judge_model')} as verdict, q.question, tf.answer as full_answer,
            tm.answer as masked_answer
        from samples as s
        inner join dim_questions as q using (question_id)
        left join fct_answer_texts as tf on tf.response_id = s.full_response_id{of("tf")}
        left join fct_answer_texts as tm on tm.response_id = s.masked_response_id{of("tm")}""", params


def export_sql(layer: SemanticLayer, cell: Cell) -> tuple[str, list]:
    """Every sample of the cell, unpaged, for a download: what the page lists of each, the question
    and both answers' texts included (an answer's download: its text as full_answer)."""
    sql, params = _samples_sql(layer, cell)
    return (f"select * exclude (full_response_id, masked_response_id) from ({sql}) order by {SORTS['question']}", params)


def cell_from_query(layer: SemanticLayer, metric: str, by: list[str], values: dict[str, str | None],
                    condition: Condition | None, where: str | None = None, without: Dimension | None = None) -> Cell:
    """A cell named by a URL: the metric, the slice's dimensions (KEPT added; WITHOUT, a comparison's
    dimension, left out), each one's value."""
    chosen = layer.metric(metric)
    dimensions = list(dict.fromkeys(layer.dimension(name) for name in by))
    dimensions += [layer.dimensions[name] for name in KEPT if layer.dimensions[name] not in dimensions]
    dimensions = [d for d in dimensions if d != without]
    missing = [d.name for d in dimensions if d.name not in values]
    if missing:
        raise InputError("cell", f"no value for {', '.join(missing)}", "open the cell from the metrics table, which names them all")
    return Cell(chosen, dimensions, {d.name: values[d.name] for d in dimensions}, condition, list(by), where)


def url_value(value) -> str | None:
    """A dimension's value as text, as DuckDB casts it to varchar (None for NULL)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "item"):
        return url_value(value.item())
    return repr(value) if isinstance(value, float) else str(value)


def case_influence(cur, layer: SemanticLayer, cell: Cell) -> list[dict]:
    """Each case of the cell: its question rows, its sum, and the cell's estimate with the case left
    out ((S - S_c) / (N - N_c)), largest influence first."""
    sql, params = cell_sql(layer, cell)
    m = cell.metric
    return records(cur, f"""
        with by_case as (
            select cohort, case_id, sum({m.numerator}) as s, sum({m.denominator}) as n
            from ({sql}) group by cohort, case_id having sum({m.denominator}) > 0),
        total as (select sum(s) as s, sum(n) as n from by_case)
        select b.cohort, b.case_id, cast(b.n as bigint) as n_questions, b.s / b.n as case_estimate,
            t.s / t.n as estimate, (t.s - b.s) / nullif(t.n - b.n, 0) as without_case,
            (t.s - b.s) / nullif(t.n - b.n, 0) - t.s / t.n as influence
        from by_case as b, total as t
        order by abs(influence) desc nulls last, b.cohort, b.case_id""", params)


def case_questions(cur, cohort: str, case_id: str) -> tuple[dict | None, list[dict]]:
    """A case and each of its questions with its question rows' values (every model, condition,
    prompt variant and visibility) and a sample to open."""
    cursor = cur.execute("select * from dim_cases where cohort = ? and case_id = ?", [cohort, case_id])
    row = cursor.fetchone()
    if row is None:
        return None, []
    case = dict(zip([d[0] for d in cursor.description], row))
    cursor = cur.execute("""
        select q.question_id, q.question, q.format, q.cutoff_event, q.cutoff_hours, q.relpos_band, q.correct_answer,
            p.model, p.condition, p.prompt_variant, p.visibility, p.acc_sum / nullif(p.acc_n, 0) as acc,
            p.htr_sum / nullif(p.htr_n, 0) as htr, p.delta_htr_sum / nullif(p.delta_htr_n, 0) as delta_htr,
            (select min(pair_id) from fct_answer_pairs as a where a.question_id = p.question_id and a.model = p.model
                and a.condition = p.condition and a.prompt_variant = p.prompt_variant) as pair_id
        from dim_questions as q
        left join fct_metric_parts as p on p.question_id = q.question_id and p.visibility = 'paired'
        where q.cohort = ? and q.case_id = ?
        order by q.cutoff_hours, q.question_id, p.model, p.condition, p.prompt_variant""", [cohort, case_id])
    names = [d[0] for d in cursor.description]
    questions: dict[str, dict] = {}
    for values in cursor.fetchall():
        row = dict(zip(names, values))
        entry = questions.setdefault(row["question_id"], {k: row[k] for k in names[:7]} | {"pairs": []})
        if row["model"] is not None:
            entry["pairs"].append({k: row[k] for k in names[7:]})
    return case, list(questions.values())
