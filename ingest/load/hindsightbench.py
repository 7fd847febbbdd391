"""`hindsight load hindsightbench ROOT`: a HindsightBench release into raw.

Required: `macrochain/data/processed/{sketches_panel.jsonl, spx_target_new.parquet}`
(the panel dates and the S&P 500 labels). Optional: `hindsight/outputs/bench/<model>/`
(arm cells, each with its whole reply `04_raw_response.txt` where the release
kept it, date and LAP probes), `hindsight/outputs/review/lap_sensitivity_runs/<model>/`
(LAP re-probes at other temperatures and samples, the lap-sensitivity probe set), and the prompt inputs
`macrochain/data/processed/sketch_batch_requests.jsonl` (the 240 pre-cutoff
requests) and `hindsight/outputs/fm1c/postcutoff_snapshots.json` (the 18
post-cutoff snapshots), from which dbt builds every request (fct_hb_requests).
A root with only the panel is a valid release to audit new models on; other
files are listed, never an error. Cells that are symlinks are followed.
A malformed line or file is quarantined in raw.rejected_rows with a reason and
counted. One transaction per call; a model already loaded with the same bytes
is passed over.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ingest.db import insert_rows, next_load_id
from ingest.errors import InputError

ARMS = ("R", "D", "M", "W")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass
class HindsightBenchLoad:
    load_id: int
    models: list[str] = field(default_factory=list)
    already_loaded: list[str] = field(default_factory=list)
    cells: int = 0
    sketches: int = 0
    probe_lines: int = 0
    quarantined: int = 0
    replies: int = 0
    panel_requests: int = 0
    snapshot_dates: int = 0
    ignored: list[str] = field(default_factory=list)


def _model_digest(directory: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(directory)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass
class _ReleaseRows:
    """The raw rows one call appends, per table, in the tables' column order; `reject` quarantines."""
    load_id: int
    now: datetime
    tables: dict[str, list] = field(default_factory=lambda: {table: [] for table in (
        "loads", "hb_cells", "hb_sketches", "hb_responses", "hb_panel_requests", "hb_postcutoff_snapshots",
        "hb_date_probes", "hb_lap_probes", "hb_panel_dates", "hb_spx", "rejected_rows")})

    def __getitem__(self, table: str) -> list:
        return self.tables[table]

    def reject(self, path: Path, line: int, reason: str, text: str) -> None:
        self["rejected_rows"].append((self.load_id, "hindsightbench", str(path), line, "(line)", reason,
                                      "inspect the file; the line is kept here and left out of the metrics",
                                      text[:2000], self.now))


def load_hindsightbench(con, root: Path, models: list[str] | None = None) -> HindsightBenchLoad:
    """Read the release at ROOT (its MODELS, or every model folder), quarantine what is malformed, and
    append it all in one transaction; a model folder loaded before with the same bytes is passed over."""
    root = Path(root).resolve()
    bench, panel, spx = _release_paths(root)
    available = sorted(p.name for p in bench.iterdir() if p.is_dir()) if bench.exists() else []
    wanted = models or available
    unknown = [m for m in wanted if m not in available]
    if unknown:
        raise InputError(bench, f"no model folder {', '.join(unknown)}", f"choose from {', '.join(available)}")
    rows = _ReleaseRows(next_load_id(con), datetime.now(timezone.utc).replace(tzinfo=None))
    result = HindsightBenchLoad(rows.load_id)
    result.ignored = sorted(str(p.relative_to(root)) for p in bench.iterdir() if p.is_file()) if bench.exists() else []
    seen = {(r[0], r[1]) for r in con.execute(
        "select case_id, file_sha256 from raw.loads where kind = 'hindsightbench'").fetchall()}
    for model in wanted:
        directory = bench / model
        digest = _model_digest(directory)
        if (model, digest) in seen:
            result.already_loaded.append(model)
            continue
        result.models.append(model)
        rows["loads"].append((rows.load_id, "hindsightbench", None, None, model, str(directory), digest, "loaded",
                              None, None, rows.now))
        _read_arm_cells(directory, model, rows)
        _read_probes(directory, model, rows)
    for model in wanted:
        rows["loads"].extend(_lap_reprobes(root, model, rows.load_id, rows.now, seen, rows["hb_lap_probes"], rows.reject))
    if not con.execute("select count(*) from raw.hb_panel_dates").fetchone()[0]:
        _read_panel_dates(con, panel, spx, rows)
    panel_loads, requests, snapshots = _panel_inputs(con, root, rows.load_id, rows.now, rows.reject)
    rows["loads"].extend(panel_loads)
    rows["hb_panel_requests"].extend(requests)
    rows["hb_postcutoff_snapshots"].extend(snapshots)
    _append(con, rows)
    result.cells, result.sketches, result.replies = len(rows["hb_cells"]), len(rows["hb_sketches"]), len(rows["hb_responses"])
    result.panel_requests, result.snapshot_dates = len(requests), len({row[1] for row in snapshots})
    result.probe_lines = len(rows["hb_date_probes"]) + len(rows["hb_lap_probes"])
    result.quarantined = len(rows["rejected_rows"])
    return result


def _release_paths(root: Path) -> tuple[Path, Path, Path]:
    """The release's model folders, panel dates and S&P 500 labels; the latter two are required."""
    bench = root / "hindsight" / "outputs" / "bench"
    panel = root / "macrochain" / "data" / "processed" / "sketches_panel.jsonl"
    spx = root / "macrochain" / "data" / "processed" / "spx_target_new.parquet"
    for required in (panel, spx):
        if not required.exists():
            raise InputError(required, "missing from the release layout",
                             "pass the release root holding macrochain/data/processed (and hindsight/outputs/bench)")
    return bench, panel, spx


def _read_arm_cells(directory: Path, model: str, rows: _ReleaseRows) -> None:
    """A model's arm cells (<arm>/rep<k>/<YYYY-MM-DD>/): each cell's status, its valid sketches, and its
    whole reply where the release kept one (dbt parses it and decides the cell)."""
    for arm in ARMS:
        for rep_dir in sorted((directory / arm).glob("rep*")) if (directory / arm).exists() else []:
            rep = int(rep_dir.name[3:]) if rep_dir.name[3:].isdigit() else None
            for cell in sorted(rep_dir.iterdir()):
                if not cell.is_dir() or not DATE.match(cell.name) or rep is None:
                    rows.reject(cell, 0, "not an arm cell (<arm>/rep<k>/<YYYY-MM-DD>/)", cell.name)
                    continue
                meta_path, sketch_path = cell / "03_run_meta.json", cell / "01_sketches_valid.json"
                if (cell / "04_raw_response.txt").exists():
                    rows["hb_responses"].append((rows.load_id, model, "release", "arm", arm, cell.name, rep, 0, None, None,
                                                 (cell / "04_raw_response.txt").read_text(), None, rows.now, "protocol", None))
                valid = invalid = None
                status = "empty"
                if sketch_path.exists():
                    try:
                        items = json.loads(sketch_path.read_text())
                        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
                        valid, invalid = meta.get("valid_count"), meta.get("invalid_count")
                        status = "sketches"
                        for index, item in enumerate(items):
                            rows["hb_sketches"].append((rows.load_id, model, arm, rep, cell.name, index,
                                                        item.get("direction") if isinstance(item, dict) else None,
                                                        item.get("hypothesis_id") if isinstance(item, dict) else None))
                    except (json.JSONDecodeError, AttributeError, TypeError) as error:
                        rows.reject(sketch_path, 0, f"unreadable sketches ({error})", sketch_path.read_text()[:2000])
                elif (cell / "99_parse_error.txt").exists():
                    status = "parse_error"
                rows["hb_cells"].append((rows.load_id, model, arm, rep, cell.name, str(cell), status, valid, invalid, rows.now))


def _read_probes(directory: Path, model: str, rows: _ReleaseRows) -> None:
    """A model's date and LAP probe lines (the protocol's probe set); a missing file or a line without a
    decision date is quarantined."""
    for name, table in (("date_probe_results.jsonl", "hb_date_probes"), ("lap_probe_results.jsonl", "hb_lap_probes")):
        path = directory / name
        if not path.exists():
            rows.reject(path, 0, "probe file missing", "")
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                date = record["decision_date"]
                if not isinstance(date, str) or not DATE.match(date):
                    raise ValueError(f"decision_date {date!r}")
            except (json.JSONDecodeError, KeyError, ValueError, TypeError) as error:
                rows.reject(path, number, f"malformed probe line ({error})", line)
                continue
            if table == "hb_date_probes":
                rows[table].append((rows.load_id, model, number, date, record.get("estimated_date"), record.get("raw")))
            else:
                rows[table].append((rows.load_id, model, number, date, record.get("rep"), record.get("answer"), "protocol", None))


def _read_panel_dates(con, panel: Path, spx: Path, rows: _ReleaseRows) -> None:
    """The panel's decision dates and the S&P 500 labels, loaded once per warehouse."""
    dates = set()
    for number, line in enumerate(panel.read_text().splitlines(), start=1):
        try:
            dates.add(json.loads(line)["decision_date"])
        except (json.JSONDecodeError, KeyError, TypeError):
            rows.reject(panel, number, "malformed panel line", line)
    rows["hb_panel_dates"].extend((rows.load_id, d) for d in sorted(dates))
    rows["hb_spx"].extend(con.execute(f"""select {rows.load_id}, strftime(cast(date as date), '%Y-%m-%d'), forward_return_20d
                                          from read_parquet(?) order by date""", [str(spx)]).fetchall())


def _append(con, rows: _ReleaseRows) -> None:
    """Every table's rows in one transaction: a failure appends nothing."""
    con.execute("begin transaction")
    try:
        for table, values in rows.tables.items():
            insert_rows(con, f"raw.{table}", values)
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise


def _lap_reprobes(root: Path, model: str, load_id: int, now, seen: set, lap_probes: list, reject) -> list:
    """A model's LAP re-probes of the sensitivity check (`hindsight/outputs/review/lap_sensitivity_runs/
    <model>/*.jsonl`: decision_date, rep, answer, temp): lines of the lap-sensitivity probe set, loaded
    again only when the folder's bytes changed; the raw.loads row of the folder is returned."""
    directory = root / "hindsight" / "outputs" / "review" / "lap_sensitivity_runs" / model
    if not directory.is_dir():
        return []
    digest = _model_digest(directory)
    if (f"{model} lap-sensitivity", digest) in seen:
        return []
    for path in sorted(directory.glob("*.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                date, temperature = record["decision_date"], float(record["temp"])
                if not isinstance(date, str) or not DATE.match(date):
                    raise ValueError(f"decision_date {date!r}")
                if not isinstance(record.get("rep"), int):
                    raise ValueError(f"rep {record.get('rep')!r} is not an integer")
            except (json.JSONDecodeError, KeyError, ValueError, TypeError) as error:
                reject(path, number, f"malformed re-probe line ({error}); each line needs decision_date, rep, answer, temp", line)
                continue
            lap_probes.append((load_id, model, number, date, record["rep"], record.get("answer"), "lap_sensitivity", temperature))
    return [(load_id, "hindsightbench", None, None, f"{model} lap-sensitivity", str(directory), digest, "loaded", None, None, now)]


def _panel_inputs(con, root: Path, load_id: int, now, reject) -> tuple[list, list, list]:
    """The prompt inputs (raw.loads rows, pre-cutoff requests, post-cutoff snapshot lines), each file
    loaded again only when its bytes changed (dbt reads the latest load)."""
    requests_path = root / "macrochain" / "data" / "processed" / "sketch_batch_requests.jsonl"
    snapshots_path = root / "hindsight" / "outputs" / "fm1c" / "postcutoff_snapshots.json"
    seen = {r[0] for r in con.execute("select file_sha256 from raw.loads where kind = 'hindsightbench_panel'").fetchall()}
    loads, requests, snapshots = [], [], []
    for path in (requests_path, snapshots_path):
        if not path.exists():
            continue
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest in seen:
            continue
        before = len(requests) + len(snapshots)
        if path == requests_path:
            for number, line in enumerate(data.decode().splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    stamp = record["key"].rsplit("_", 1)[-1]          # sketch_001_20050115
                    date = f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:]}"
                    if not DATE.match(date):
                        raise ValueError(f"key {record['key']!r} does not end in YYYYMMDD")
                    request = record["request"]
                    requests.append((load_id, date, record["key"], request["systemInstruction"]["parts"][0]["text"],
                                     request["contents"][0]["parts"][0]["text"]))
                except (json.JSONDecodeError, KeyError, IndexError, TypeError, ValueError) as error:
                    reject(path, number, f"malformed panel request ({error!r}); expected key sketch_NNN_YYYYMMDD, "
                                         "request.systemInstruction and request.contents", line)
        else:
            try:
                for date, series in json.loads(data)["snapshots"].items():
                    if not DATE.match(date):
                        raise ValueError(f"snapshot date {date!r}")
                    for series_id, values in series.items():
                        # values as the release's JSON spells them: the prompt shows them verbatim
                        snapshots.append((load_id, date, series_id, str(values["vintage_date"]),
                                          str(values["vintage_value"]), str(values["revised_value"])))
            except (json.JSONDecodeError, KeyError, AttributeError, TypeError, ValueError) as error:
                raise InputError(path, f"not a post-cutoff snapshot file ({error!r})",
                                 "give {\"snapshots\": {\"YYYY-MM-DD\": {SERIES: {vintage_date, vintage_value, revised_value}}}}") from error
        loads.append((load_id, "hindsightbench_panel", None, None, path.name, str(path), digest, "loaded", None,
                      len(requests) + len(snapshots) - before, now))
    return loads, requests, snapshots
