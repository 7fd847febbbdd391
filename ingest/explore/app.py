"""`hindsight explore`: a local web application from any number to the evidence behind it.

A WSGI application served by the standard library (no framework, no Node toolchain): pages are
rendered on the server with Jinja2 (autoescaped: every text from a model, a file or a URL is text),
every query runs in DuckDB beside the published snapshot (ingest/explore/snapshot.py), and every view
is a URL whose query string holds its filters, so a link reproduces it. The page loads only its own
stylesheet and script from /static/ under a Content-Security-Policy that allows nothing else (no
inline script, no other origin). A bad parameter is a 400 with a one-line reason, an unknown id a 404.
"""
from __future__ import annotations

import io
import re
import time
import traceback
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs, urlencode

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from jinja2 import Environment, PackageLoader, select_autoescape

from ingest.errors import InputError
from ingest.explore import audit, comparison, display, evidence, pair
from ingest.explore.forest import forest
from ingest.explore.server import CSP, HEADERS, LOOPBACK_NAMES, host_allowed  # noqa: F401 - CSP: the pages' policy
from ingest.explore.snapshot import Marts, TimedOut, has_mart, time_limit
from ingest.publish.compare import COLUMNS as COMPARE_COLUMNS
from ingest.publish.compare import left_out, parse_compare
from ingest.publish.query import engine_message
from ingest.publish.semantic import semantic_layer
from ingest.publish.slices import COLUMNS as SLICE_COLUMNS
from ingest.publish.slices import slice_metrics, where_names
from ingest.publish.where import parse_where
from ingest.stats import multiplicity

STATIC = Path(__file__).with_name("static")
STATIC_FILES = {"explore.css": "text/css; charset=utf-8", "explore.js": "text/javascript; charset=utf-8",
                "favicon.svg": "image/svg+xml"}
DEFAULT_METRICS, DEFAULT_BY = ["delta_htr"], ["model", "condition"]
PAGE_CELLS = 100             # cells a metrics or comparison page shows (the downloads hold them all)
PAGE_ROWS = 100              # question rows a case's page shows
SLICE_TIMEOUT = 30
QUERY_TIMEOUT = 30           # every query of a page, together
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
DIGITS = re.compile(r"[0-9]{1,9}")          # ASCII digits only: str.isdigit() takes '²', which int() refuses
# the engine's refusals of what a URL asked for (a condition over no such column, a value of the wrong type)
INPUT_ERRORS = (duckdb.BinderException, duckdb.CatalogException, duckdb.ConversionException,
                duckdb.InvalidInputException, duckdb.OutOfRangeException, duckdb.ParserException)


class NotFound(Exception):
    pass


@dataclass
class Request:
    path: str
    query: dict[str, list[str]]

    def one(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        if values and len(values) > 1:
            raise InputError(name, "given more than once", f"give {name} once")
        return values[0] if values else default

    def names(self, name: str, default: list[str]) -> list[str]:
        """Comma-separated names, given once or as repeated parameters (checkboxes)."""
        values = self.query.get(name)
        if not values:
            return list(default)
        return list(dict.fromkeys(n.strip() for value in values for n in value.split(",") if n.strip()))

    def number(self, name: str, default: int | None) -> int | None:
        value = self.one(name)
        if value is None or value == "":
            return default
        if not DIGITS.fullmatch(value):
            raise InputError(name, f"{value[:40]!r} is not a whole number of at most 9 digits", f"give {name} as 1, 2, ...")
        return int(value)


@dataclass
class Response:
    body: bytes
    status: HTTPStatus = HTTPStatus.OK
    content_type: str = "text/html; charset=utf-8"
    extra: list[tuple[str, str]] = field(default_factory=list)


def link(path: str, **params) -> str:
    """PATH with PARAMS as its query string (None and empty values left out)."""
    kept = {k: v for k, v in params.items() if v is not None and v != "" and v != []}
    return f"{path}?{urlencode(kept, doseq=True)}" if kept else path


class Explorer:
    def __init__(self, warehouse: Path, hosts: frozenset[str] = LOOPBACK_NAMES, query_timeout: float = QUERY_TIMEOUT):
        self.marts = Marts(warehouse)
        self.hosts, self.query_timeout = hosts, query_timeout
        self.layer = semantic_layer()
        self.templates = Environment(loader=PackageLoader("ingest.explore", "templates"),
                                     autoescape=select_autoescape(default=True, default_for_string=True),
                                     trim_blocks=True, lstrip_blocks=True)
        self.templates.globals.update(link=link, url_value=evidence.url_value, interval=display.interval,
                                      significance=display.significance, note=display.note,
                                      blank=display.blank, labels=self.labels, undefined=display.undefined,
                                      layer=self.layer)
        self.templates.filters.update(est=display.est, label_of=lambda name: self.labels.get(name, name))
        self.routes = {"/": self.metrics_view, "/cell": self.cell_view, "/cell.csv": self.cell_export,
                       "/cell.parquet": self.cell_export, "/pair": self.pair_view, "/answer": self.answer_view,
                       "/compare": self.compare_view, "/compare/questions": self.compare_questions_view,
                       "/cell/cases": self.cases_view, "/case": self.case_view, "/hb": self.hb_view, "/hb/row": self.hb_row_view,
                       "/hb/cell": self.hb_cell_view, "/hb/reply": self.hb_reply_view}

    def get(self, url: str) -> tuple[int, dict, bytes]:
        """GET URL of this application in process: (status, headers, body), as a browser would have it."""
        path, _, query = url.partition("?")
        seen = {}

        def start(status, headers):
            seen["status"], seen["headers"] = int(status.split()[0]), dict(headers)

        body = b"".join(self({"PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": "GET"}, start))
        return seen["status"], seen["headers"], body

    # the WSGI entry point
    def __call__(self, environ, start_response):
        request = Request(environ.get("PATH_INFO") or "/", parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True))
        started = time.perf_counter()
        try:
            if not host_allowed(environ.get("HTTP_HOST"), self.hosts):
                response = self.error(HTTPStatus.BAD_REQUEST, (
                    f"this explorer does not serve the host name {environ['HTTP_HOST'][:100]!r} (a page of another site "
                    f"may be reading it through a name that points here): open it at http://127.0.0.1 or http://localhost, "
                    f"or start it with --allow-host NAME for a name you trust"))
            else:
                with time_limit(self.query_timeout):
                    response = self.respond(request, environ.get("REQUEST_METHOD", "GET"))
        except TimedOut:
            response = self.error(HTTPStatus.BAD_REQUEST, f"the page's queries ran longer than their limit of "
                                  f"{self.query_timeout:g} s and were stopped: narrow the where (a subquery that reads "
                                  "every row of a mart is the usual cause)")
        except Exception as error:  # noqa: BLE001 - the page says so in a line; the traceback goes to the log
            traceback.print_exc()
            response = self.error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(error).__name__}: {error}")
        headers = [("Content-Type", response.content_type), ("Content-Length", str(len(response.body))),
                   ("Server-Timing", f"app;dur={(time.perf_counter() - started) * 1000:.1f}"), *HEADERS, *response.extra]
        start_response(f"{response.status.value} {response.status.phrase}", headers)
        return [response.body]

    def respond(self, request: Request, method: str) -> Response:
        if method not in ("GET", "HEAD"):
            return self.error(HTTPStatus.METHOD_NOT_ALLOWED, "only GET: every view is a link")
        if request.path.startswith("/static/"):
            return self.static(request.path.removeprefix("/static/"))
        handler = self.routes.get(request.path)
        if handler is None:
            return self.error(HTTPStatus.NOT_FOUND, f"no page {request.path}")
        for attempt in (1, 2):
            try:
                return handler(request)
            except NotFound as missing:
                return self.error(HTTPStatus.NOT_FOUND, str(missing))
            except InputError as error:
                return self.error(HTTPStatus.BAD_REQUEST, str(error))
            except INPUT_ERRORS as error:
                return self.error(HTTPStatus.BAD_REQUEST, f"the engine refused what the URL asks for: {engine_message(error)}")
            except duckdb.IOException:
                # the snapshot a page began on was pruned under it (several publishes while it ran):
                # the page again, whole, on the snapshot current now
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def static(self, name: str) -> Response:
        # a fixed list of files by name: no path from the URL ever reaches the file system
        if name not in STATIC_FILES:
            return self.error(HTTPStatus.NOT_FOUND, "no such file")
        return Response((STATIC / name).read_bytes(), content_type=STATIC_FILES[name],
                        extra=[("Cache-Control", "max-age=3600")])

    def page(self, template: str, code: HTTPStatus = HTTPStatus.OK, **context) -> Response:
        pinned = context.pop("pinned", None)
        html = self.templates.get_template(template).render(build=pinned.build if pinned else None,
                                                            snapshot=pinned.id if pinned else None, **context)
        return Response(html.encode(), code)

    def error(self, status: HTTPStatus, reason: str) -> Response:
        return self.page("error.html", status, status=status, reason=(reason.splitlines() or [""])[0])

    # the views
    def _slice(self, request: Request):
        metrics = request.names("metric", DEFAULT_METRICS)
        by = request.names("by", DEFAULT_BY)
        where = (request.one("where") or "").strip() or None
        for name in metrics:
            self.layer.metric(name)
        condition = parse_where(where, where_names(self.layer)) if where else None
        return metrics, by, where, condition

    @property
    def labels(self) -> dict[str, str]:
        """Each dimension's label in words (the semantic layer's), by its name and its bare name."""
        return {**{d.short: d.label for d in self.layer.dimensions.values()},
                **{d.name: d.label for d in self.layer.dimensions.values()}}

    def metrics_view(self, request: Request) -> Response:
        metrics, by, where, _ = self._slice(request)
        page = request.number("page", 1)
        pinned = self.marts.now()
        frame = self._sliced(pinned, metrics, by, where)
        names = [c for c in frame.columns if c != "metric" and c not in SLICE_COLUMNS]
        if (listed := self._listed(request, self._in_words(frame), "metrics", pinned)) is not None:
            return listed
        shown, pages = _paged(frame.to_dict(orient="records"), page, PAGE_CELLS)
        cells = []
        for row in shown:
            values = {name: evidence.url_value(row[name]) for name in names}
            cells.append({**row, "link": self.cell_link(row["metric"], by, where, values), "label": _label(values)})
        forests = self._forests(cells, "estimate", "ci_low", "ci_high", lambda m: f"{m.label}: each cell's estimate and 95% interval")
        return self.page("metrics.html", pinned=pinned, downloads=self._downloads(request), cells=cells, names=names,
                         chosen=metrics, by=by, where=where or "", layer=self.layer, forests=forests,
                         page=page, pages=pages, total=len(frame),
                         at=lambda **changed: link("/", metric=",".join(metrics), by=",".join(by), where=where, **changed))

    def _forests(self, cells: list[dict], estimate: str, low: str, high: str, title, differences: bool = False) -> list[tuple]:
        """A forest plot per metric of CELLS: (metric, its SVG); a difference or a paired metric signed."""
        out = []
        for name in dict.fromkeys(c["metric"] for c in cells):
            metric = self.layer.metric(name)
            rows = [{"label": c["label"], "estimate": c[estimate], "low": c[low], "high": c[high], "note": c.get("reason"),
                     "flag": bool(c.get("few_cases")), "caution": c.get("caution")}
                    for c in cells if c["metric"] == name]
            signed = differences or "paired" in metric.visibilities
            out.append((metric, forest(rows, title(metric), ident=f"forest-{name}", signed=signed)))
        return out

    def _in_words(self, frame: pd.DataFrame) -> pd.DataFrame:
        """FRAME with its dimension columns named as the semantic layer labels them ("Prompt variant"),
        for a CSV a reviewer opens; the statistics keep hindsight metrics' names."""
        return frame.rename(columns={c: self.labels[c] for c in frame.columns if c in self.labels})

    @staticmethod
    def _sliced(pinned, metrics: list[str], by: list[str], where: str | None, compare: str | None = None,
                adjust: str = "holm"):
        key = ("slice", tuple(metrics), tuple(by), where, compare) + ((adjust,) if compare else ())
        return pinned.slice(key, lambda: slice_metrics(
            metrics, by, where, con=pinned.cursor(), timeout=SLICE_TIMEOUT, compare=compare, adjust=adjust))

    @staticmethod
    def cell_link(metric: str, by: list[str], where: str | None, values: dict[str, str | None], path: str = "/cell",
                  **extra) -> str:
        params = {"metric": metric, "by": ",".join(by), "where": where}
        params |= {f"v.{name}": value for name, value in values.items() if value is not None}
        params["null"] = ",".join(name for name, value in values.items() if value is None)
        return link(path, **params, **extra)

    def _cell(self, request: Request, without=None) -> evidence.Cell:
        metric = request.one("metric")
        if not metric:
            raise InputError("metric", "no metric named", "open a cell from the metrics table")
        _, by, where, condition = self._slice(request)
        nulls = set(request.names("null", []))
        values = {name[2:]: vals[0] for name, vals in request.query.items() if name.startswith("v.") and vals}
        values |= {name: None for name in nulls}
        return evidence.cell_from_query(self.layer, metric, by, values, condition, where, without)

    def _list_request(self, request: Request) -> evidence.ListRequest:
        # "any" (an empty value) filters nothing
        filters = {name: request.one(f"f.{name}") for name in evidence.FILTERS if request.one(f"f.{name}")}
        return evidence.ListRequest(filters, request.one("sort", "question"), (request.one("q") or "").strip(),
                                    request.number("page", 1))

    def cell_view(self, request: Request) -> Response:
        cell = self._cell(request)
        ask = self._list_request(request)
        pinned = self.marts.now()
        cur = pinned.cursor()
        # the cell's numbers: from the slice it was opened from where this snapshot has it already, else
        # the slice of this one cell (the same numbers: each cell's replicates are its own)
        remembered = pinned.remembered(lambda key: key[0] == "slice" and cell.metric.name in key[1] and list(key[2]) == cell.by
                                       and key[3] == cell.where and key[4] is None)
        try:
            frame = remembered[-1] if remembered else slice_metrics(
                [cell.metric.name], cell.by, evidence.cell_where(cell), con=cur, timeout=SLICE_TIMEOUT)
        except InputError as error:
            if "no rows match" in str(error):
                raise NotFound("no such cell in the build shown (its values select no question)") from None
            raise
        frame = frame[frame["metric"] == cell.metric.name]
        names = [d.name for d in cell.dimensions]
        matched = frame[[all(evidence.url_value(v) == cell.values[n] for n, v in zip(names, vals))
                         for vals in frame[names].itertuples(index=False)]]
        if matched.empty:
            raise NotFound("no such cell in the build shown (its values select no question)")
        listed = evidence.items(cur, self.layer, cell, ask)
        here = {"metric": cell.metric.name, "by": ",".join(cell.by), "where": cell.where,
                **{f"v.{n}": v for n, v in cell.values.items() if v is not None},
                "null": ",".join(n for n, v in cell.values.items() if v is None)}
        state = {**here, **{f"f.{k}": v for k, v in ask.filters.items()}, "sort": ask.sort, "q": ask.search}
        return self.page("cell.html", pinned=pinned, cell=cell, stats=matched.iloc[0].to_dict(),
                         recomputed=evidence.summary(cur, self.layer, cell), listed=listed, ask=ask, here=here,
                         at=lambda **changed: link("/cell", **{**state, **changed}),
                         download=lambda kind: link(f"/cell.{kind}", **here), cases=link("/cell/cases", **here),
                         filters=evidence.FILTERS, sorts=list(evidence.SORTS), back=link("/", metric=cell.metric.name,
                                                                                           by=",".join(cell.by), where=cell.where))

    def cell_export(self, request: Request) -> Response:
        cell = self._cell(request)
        pinned = self.marts.now()
        sql, params = evidence.export_sql(self.layer, cell)
        table = pinned.cursor().sql(sql, params=params).to_arrow_table()
        filters = self.cell_link(cell.metric.name, cell.by, cell.where, cell.values, path="/cell")
        return download(table, request.path.rsplit(".", 1)[1], f"{cell.metric.name}-cell", filters, pinned.id)

    @staticmethod
    def _downloads(request: Request) -> dict[str, str]:
        """This view's list as a CSV or Parquet file: the same URL with format=."""
        kept = {k: v if len(v) > 1 else v[0] for k, v in request.query.items() if k != "format"}
        return {fmt: link(request.path, **kept, format=fmt) for fmt in ("csv", "parquet")}

    def _listed(self, request: Request, rows, name: str, pinned) -> Response | None:
        """The list a view shows as a file, where its URL asks for one (format=csv|parquet)."""
        fmt = request.one("format")
        if fmt is None:
            return None
        if fmt not in ("csv", "parquet"):
            raise InputError("format", f"{fmt!r} is not a download", "ask for format=csv or format=parquet")
        frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
        made = link(request.path, **{k: v if len(v) > 1 else v[0] for k, v in request.query.items() if k != "format"})
        return download(pa.Table.from_pandas(frame, preserve_index=False), fmt, name, made, pinned.id)

    def cases_view(self, request: Request) -> Response:
        cell = self._cell(request)
        pinned = self.marts.now()
        cases = evidence.case_influence(pinned.cursor(), self.layer, cell)
        if not cases:
            raise NotFound("no case of the cell has a value of the metric in the build shown")
        if (listed := self._listed(request, cases, f"{cell.metric.name}-cases", pinned)) is not None:
            return listed
        back = self.cell_link(cell.metric.name, cell.by, cell.where, cell.values)
        here = self.cell_link(cell.metric.name, cell.by, cell.where, cell.values, path="/cell/cases")
        return self.page("cases.html", pinned=pinned, downloads=self._downloads(request), cell=cell, cases=cases, back=back,
                         here=here)

    def case_view(self, request: Request) -> Response:
        cohort, case_id = request.one("cohort"), request.one("case_id")
        if not cohort or not case_id:
            raise InputError("case", "no case named", "give cohort and case_id, or open a case from a cell's cases")
        page = request.number("page", 1)
        pinned = self.marts.now()
        case, questions = evidence.case_questions(pinned.cursor(), cohort, case_id)
        if case is None:
            raise NotFound(f"no case {cohort}/{case_id} in the build shown")
        # a page of PAGE_ROWS question rows (a question with none is a row of its own), its questions whole
        rows = [(q, p) for q in questions for p in (q["pairs"] or [None])]
        shown, pages = _paged(rows, page, PAGE_ROWS)
        paged = {}
        for question, row in shown:
            entry = paged.setdefault(question["question_id"], {**question, "pairs": []})
            if row is not None:
                entry["pairs"].append(row)
        back = _back(request)
        return self.page("case.html", pinned=pinned, case=case, questions=list(paged.values()), page=page, pages=pages,
                         total=len(rows), back=back,
                         at=lambda **changed: link("/case", cohort=cohort, case_id=case_id, back=back, **changed))

    def hb_view(self, request: Request) -> Response:
        pinned = self.marts.now()
        rows = audit.audit_rows(pinned.cursor())
        return self._listed(request, rows, "audit-rows", pinned) or self.page("hb.html", pinned=pinned, downloads=self._downloads(request), rows=rows)

    def hb_row_view(self, request: Request) -> Response:
        model_key = self._audit_row_named(request)
        version = request.number("row_version", 1)
        pinned = self.marts.now()
        found = audit.audit_row(pinned.cursor(), model_key, version)
        if found is None:
            raise NotFound(f"no audit row {model_key!r} (version {version}) in the build shown")
        return self.page("hb_row.html", pinned=pinned, found=found)

    def hb_cell_view(self, request: Request) -> Response:
        """One decision date of an audit row: what it gave, and the replies behind it."""
        model_key, version, date = self._audit_row_named(request), request.number("row_version", 1), _date(request)
        kind, arm = _choice(request, "kind", audit.KINDS), _choice(request, "arm", audit.ARMS)
        pinned = self.marts.now()
        cur = pinned.cursor()
        _require_replies(cur)
        row = audit.row_head(cur, model_key, version)
        if row is None:
            raise NotFound(f"no audit row {model_key!r} (version {version}) in the build shown")
        found = audit.date_cell(cur, model_key, version, date)
        if found is None:
            raise NotFound(f"no decision date {date} in audit row {model_key!r} (version {version}) of the build shown")
        replies = audit.cell_replies(cur, model_key, date, kind, arm)
        if (listed := self._listed(request, audit.flat_replies(replies), f"replies-{model_key}-{date}", pinned)) is not None:
            return listed
        return self.page("hb_cell.html", pinned=pinned, downloads=self._downloads(request), cell=found, row=row,
                         replies=replies, kind=kind, arm=arm, kinds=audit.KINDS, arms=audit.ARMS,
                         position=audit.reply_position)

    def hb_reply_view(self, request: Request) -> Response:
        """One reply whole, named by its call position (a release's replies have no request id)."""
        model_key = self._audit_row_named(request)
        kind = _choice(request, "kind", audit.KINDS)
        if kind is None:
            raise InputError("kind", "no kind of reply named", "open a reply from a decision date's replies")
        position = {"date": _date(request), "kind": kind, "arm": _choice(request, "arm", audit.ARMS),
                    "replicate": request.number("replicate", None), "sample": request.number("sample", 0),
                    "probe_set": _choice(request, "probe_set", audit.PROBE_SETS) or "protocol",
                    "temperature": _decimal(request, "temperature")}
        pinned = self.marts.now()
        cur = pinned.cursor()
        _require_replies(cur)
        found = audit.reply(cur, model_key, position)
        if found is None:
            raise NotFound(f"no such reply of {model_key!r} on {position['date']} in the build shown")
        return self.page("hb_reply.html", pinned=pinned, reply=found, row_version=request.number("row_version", 1))

    @staticmethod
    def _audit_row_named(request: Request) -> str:
        model_key = request.one("model_key")
        if not model_key:
            raise InputError("model_key", "no audit row named", "open a row from the HindsightBench page")
        return model_key

    def compare_view(self, request: Request) -> Response:
        metrics, by, where, _ = self._slice(request)
        compare = (request.one("compare") or "").strip()
        adjust = request.one("adjust") or "holm"
        if adjust not in multiplicity.ADJUSTMENTS:
            raise InputError("adjust", f"unknown adjustment {adjust!r}", f"use one of {', '.join(multiplicity.ADJUSTMENTS)}")
        page = request.number("page", 1)
        pinned = self.marts.now()
        cur = pinned.cursor()
        models = [r[0] for r in cur.execute("select distinct model from fct_metric_parts order by 1").fetchall()]
        cells, names, forests, pages, total, compared, families, method, gone = [], [], [], 1, 0, None, [], "", []
        if compare:
            compared = parse_compare(compare, self.layer)
            # the form's By (the metrics' default cut) may hold what is now compared: the page leaves it
            # out of the cells and says so, where the command line refuses it in one line
            kept = [name for name in by if self.layer.dimension(name) != compared[0]]
            if len(kept) < len(by):
                gone.append(f"By: {compared[0].short} left out, it is what is compared")
            by = kept
            frame = self._sliced(pinned, metrics, by, where, compare, adjust)
            families, gone = list(dict.fromkeys(frame["family"])), gone + left_out(frame)
            method = frame["ci_method"].iloc[0] if len(frame) else ""
            if (listed := self._listed(request, self._in_words(frame), "comparison", pinned)) is not None:
                return listed
            names = [c for c in frame.columns if c != "metric" and c not in COMPARE_COLUMNS]
            shown, pages = _paged(frame.to_dict(orient="records"), page, PAGE_CELLS)
            total = len(frame)
            for row in shown:
                values = {name: evidence.url_value(row[name]) for name in names}
                cells.append({**row, "label": _label(values) or "all", "link": self.cell_link(
                    row["metric"], by, where, values, path="/compare/questions", compare=compare)})
            a, b = compared[1], compared[2]
            forests = self._forests(cells, "difference", "ci_low", "ci_high",
                                    lambda m, a=a, b=b: f"{m.label}: {a} − {b} in each cell, with its 95% interval",
                                    differences=True)
        return self.page("compare.html", pinned=pinned, downloads=self._downloads(request),
                         cells=cells, names=names, chosen=metrics, by=by, where=where or "", compared=compared,
                         compare=compare, models=models, layer=self.layer, forests=forests, page=page, pages=pages,
                         total=total, adjust=adjust, adjustment_name=multiplicity.NAMES[adjust], families=families,
                         method=method, left_out=gone,
                         at=lambda **changed: link("/compare", metric=",".join(metrics), by=",".join(by),
                                                   where=where, compare=compare, adjust=adjust, **changed))

    def compare_questions_view(self, request: Request) -> Response:
        compared = parse_compare(request.one("compare") or "", self.layer)
        cell = self._cell(request, without=compared[0])
        pinned = self.marts.now()
        rows = comparison.questions(pinned.cursor(), self.layer, cell, compared)
        if (listed := self._listed(request, rows, "where-they-differ", pinned)) is not None:
            return listed
        back = link("/compare", metric=cell.metric.name, by=",".join(cell.by), where=cell.where, compare=request.one("compare"))
        return self.page("compare_questions.html", pinned=pinned, downloads=self._downloads(request),
                         cell=cell, compared=compared, rows=rows, back=back,
                         limit=comparison.LIMIT)

    def pair_view(self, request: Request) -> Response:
        return self._question_cell(request, "pair", pair.pair)

    def answer_view(self, request: Request) -> Response:
        return self._question_cell(request, "answer", pair.single)

    def _question_cell(self, request: Request, noun: str, find) -> Response:
        """A pair, or an answer, by its id: the paper's Figure 2 with both answers."""
        named = request.one("id")
        if not named:
            raise InputError("id", f"no {noun} named", f"open a {noun} from a cell's evidence")
        pinned = self.marts.now()
        try:
            found = find(pinned.cursor(), named, request.one("model"))
        except InputError as missing:
            raise NotFound(str(missing)) from None
        return self.page("pair.html", pinned=pinned, found=found, back=_back(request))


def _paged(rows: list, page: int, size: int) -> tuple[list, int]:
    """PAGE (from 1) of ROWS, SIZE a page, and the number of pages; a page past the last is a 404."""
    pages = max(1, -(-len(rows) // size))
    if page < 1 or page > pages:
        raise NotFound(f"no page {page}: there are {pages}")
    return rows[(page - 1) * size:page * size], pages


def _label(values: dict) -> str:
    return " · ".join("NULL" if v is None else str(v) for v in values.values())


def download(table, fmt: str, name: str, made_by: str, snapshot_id: str) -> Response:
    """TABLE as a CSV or Parquet file (the Parquet file records the link that made it and the snapshot)."""
    sink = io.BytesIO()
    if fmt == "parquet":
        pq.write_table(table.replace_schema_metadata({"hindsight_filter": made_by, "snapshot_id": snapshot_id}), sink)
        kind = "application/vnd.apache.parquet"
    else:
        pacsv.write_csv(table, sink)
        kind = "text/csv; charset=utf-8"
    return Response(sink.getvalue(), content_type=kind,
                    extra=[("Content-Disposition", f'attachment; filename="{name}-{snapshot_id[:8]}.{fmt}"')])


def _require_replies(cur) -> None:
    if not has_mart(cur, "fct_hb_replies"):
        raise NotFound("the build shown was published before its marts held the replies (fct_hb_replies): "
                       "run `hindsight build` and reload")


def _date(request: Request) -> str:
    date = request.one("date")
    if not date or not DATE.fullmatch(date):
        raise InputError("date", f"{date!r} is not a decision date" if date else "no decision date named",
                         "give date as YYYY-MM-DD, or open a date from an audit row")
    return date


def _choice(request: Request, name: str, allowed: tuple[str, ...]) -> str | None:
    value = request.one(name) or None
    if value is not None and value not in allowed:
        raise InputError(name, f"{value!r} is not one of them", f"give {name} as one of {', '.join(allowed)}")
    return value


def _decimal(request: Request, name: str) -> float | None:
    value = request.one(name) or None
    try:
        return None if value is None else float(value)
    except ValueError:
        raise InputError(name, f"{value!r} is not a number", f"give {name} as a number such as 0.7") from None


def _back(request: Request) -> str | None:
    """The evidence page to go back to: one of this application's own cell or cases links, nothing else."""
    back = request.one("back")
    return back if back and back.startswith(("/cell?", "/cell/cases?")) else None


