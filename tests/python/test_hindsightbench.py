"""HindsightBench audit rows recomputed from the release layout: every published
value of the four models in ../shared/data, the gates, the leaderboard and its
drift check, and a small synthetic release for quarantine and symlinks."""
from __future__ import annotations

import csv
import json

import duckdb
import pytest

from conftest import assert_dbt_passed, hindsight, new_warehouse, query, require_shared
from ingest.publish.leaderboard import PUBLISHED

pytestmark = pytest.mark.slow

E1_REFERENCE = {  # upstream e1_all_models.json, quoted in the release's EXTRACTION_NOTES.md
    "claude-haiku-4-5": (-0.06344696969696967, -0.1336845012626263, 0.0067984532828281345),
    "llama-3.1-70b-awq": (0.07291666666666666, -0.011837121212121215, 0.15278172348484842),
}


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    root = require_shared("hindsightbench")
    db = new_warehouse(tmp_path_factory.mktemp("hb"))
    out = hindsight(db, "load", "hindsightbench", root).stdout
    assert "claude-haiku-4-5, gpt-5.4-mini, llama-3.1-70b-awq, qwen3.6-27b-fp8" in out
    assert "8256 cells" in out and "0 quarantined" in out
    hindsight(db, "build")
    assert_dbt_passed(db)
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute("select * from agg_hb_audit_rows")
        names = [d[0] for d in cursor.description]
        rows = {r[0]: dict(zip(names, r)) for r in cursor.fetchall()}
    with open(root / "hindsight" / "outputs" / "bench" / "bench_rows.csv", newline="") as handle:
        published = {r["key"]: r for r in csv.DictReader(handle)}
    return db, rows, published, root


def test_every_published_value_is_reproduced(audit):
    _, rows, published, _ = audit
    assert set(rows) == {"claude-haiku-4-5", "gpt-5.4-mini", "llama-3.1-70b-awq", "qwen3.6-27b-fp8"}
    checked = 0
    for key, row in rows.items():
        for column in PUBLISHED:
            expected, actual = published[key][column], row[column]
            if expected == "":
                assert actual is None, (key, column, actual)
            elif column == "empirical_cutoff" or column.endswith("_n") or column == "cells":
                assert str(actual) == expected, (key, column, actual)       # exactly
            else:
                assert actual == pytest.approx(float(expected), abs=1e-9), (key, column)
            checked += 1
    assert checked == 4 * len(PUBLISHED)


def test_e1_and_its_ci_match_the_upstream_reference(audit):
    _, rows, _, _ = audit
    for key, (estimate, low, high) in E1_REFERENCE.items():
        assert (rows[key]["e1_est"], rows[key]["e1_lo"], rows[key]["e1_hi"]) == pytest.approx((estimate, low, high), abs=1e-12)


def test_gates_are_computed_and_reported(audit):
    _, rows, published, _ = audit
    for key, row in rows.items():
        assert row["lap_at_chance"] == (published[key]["lap_at_chance"] == "True") == row["published_lap_at_chance"]
        assert row["e2_finite_replicates"] == 10_000
    assert rows["gpt-5.4-mini"]["delta_gate"] == "lowvar" and rows["gpt-5.4-mini"]["delta"] is None
    assert "population variance of LAP" in rows["gpt-5.4-mini"]["undefined_reasons"]
    # the only negative-signal date of llama-3.1-70b-awq has LAP = 0: delta is reproduced and flagged
    assert rows["llama-3.1-70b-awq"]["delta_rank_deficient"] is True
    assert "rank-deficient" in rows["llama-3.1-70b-awq"]["undefined_reasons"]
    assert rows["claude-haiku-4-5"]["delta_rank_deficient"] is False
    assert rows["claude-haiku-4-5"]["p1_model_relative"] is None and rows["claude-haiku-4-5"]["p1_mode"] == "calendar"


def test_lap_series_explains_the_cutoff(audit):
    db, rows, _, _ = audit
    for key, row in rows.items():
        last = query(db, "select max(decision_month) from agg_hb_lap_series where model_key = ? and is_above_threshold", [key])
        assert last[0][0] == row["empirical_cutoff"]
    assert query(db, "select count(*) from agg_hb_lap_series where model_key = 'gpt-5.4-mini'")[0][0] == 258


def test_reload_adds_nothing(audit, tmp_path):
    db, _, _, root = audit
    copy = tmp_path / "again.duckdb"
    copy.write_bytes(db.read_bytes())
    before = query(copy, "select count(*) from raw.hb_sketches")[0][0]
    out = hindsight(copy, "load", "hindsightbench", root, "--model", "gpt-5.4-mini").stdout
    assert "already loaded: gpt-5.4-mini" in out
    assert query(copy, "select count(*) from raw.hb_sketches")[0][0] == before


def test_leaderboard_and_drift_check(audit, tmp_path):
    db, _, _, root = audit
    frozen = root / "hindsight" / "outputs" / "bench" / "bench_rows.csv"
    out = hindsight(db, "leaderboard", "--out", tmp_path / "board", "--check", frozen).stdout
    assert "drift check: ok" in out and "only in the frozen file: gpt-5.5" in out
    assert "| Claude Haiku 4.5 | +0.383 [+0.304, +0.466]" in (tmp_path / "board.md").read_text()
    assert "—ᵍ (lowvar)" in (tmp_path / "board.md").read_text()
    strict = hindsight(db, "leaderboard", "--out", tmp_path / "board", "--check", frozen, "--strict", expect=1).stdout
    assert "drift check: FAILED" in strict
    with frozen.open(newline="") as handle:
        lines = list(csv.reader(handle))
    header = lines[0]
    for line in lines[1:]:
        if line[0] == "qwen3.6-27b-fp8":
            line[header.index("e2_est")] = "0.2"
            line[header.index("empirical_cutoff")] = "2025-01"
    drifted = tmp_path / "drifted.csv"
    with drifted.open("w", newline="") as handle:
        csv.writer(handle).writerows(lines)
    out = hindsight(db, "leaderboard", "--out", tmp_path / "board", "--check", drifted, expect=1).stdout
    assert "drift: qwen3.6-27b-fp8.e2_est: frozen 0.2" in out
    assert "drift: qwen3.6-27b-fp8.empirical_cutoff: frozen 2025-01, now 2024-11" in out


def test_a_small_release_quarantines_malformed_lines_and_follows_symlinks(tmp_path):
    root = tmp_path / "release"
    model = root / "hindsight" / "outputs" / "bench" / "tiny:1.0"
    processed = root / "macrochain" / "data" / "processed"
    processed.mkdir(parents=True)
    (processed / "sketches_panel.jsonl").write_text(
        "".join(json.dumps({"decision_date": f"2013-{m:02d}-15"}) + "\n" for m in range(1, 13)) + "{broken\n")
    with duckdb.connect() as con:
        con.execute(f"""copy (select timestamp '2013-01-15' as date, 0.01 as forward_return_20d)
                        to '{processed / "spx_target_new.parquet"}' (format parquet)""")
    elsewhere = tmp_path / "elsewhere" / "2013-02-15"
    elsewhere.mkdir(parents=True)
    (elsewhere / "01_sketches_valid.json").write_text(json.dumps([{"direction": "-"}, {"direction": "+"}]))
    (elsewhere / "03_run_meta.json").write_text(json.dumps({"valid_count": 2, "invalid_count": 6}))
    cell = model / "D" / "rep1" / "2013-01-15"
    cell.mkdir(parents=True)
    (cell / "01_sketches_valid.json").write_text(json.dumps([{"direction": "+"}]))
    (cell / "03_run_meta.json").write_text(json.dumps({"valid_count": 1}))
    (model / "D" / "rep1" / "2013-02-15").symlink_to(elsewhere, target_is_directory=True)
    (model / "M" / "rep1" / "2013-01-15").mkdir(parents=True)
    (model / "M" / "rep1" / "2013-01-15" / "99_parse_error.txt").write_text("no JSON")
    (model / "date_probe_results.jsonl").write_text(json.dumps({"decision_date": "2013-01-15", "estimated_date": "2013-01"}) + "\n")
    (model / "lap_probe_results.jsonl").write_text(
        json.dumps({"decision_date": "2013-01-15", "rep": 0, "answer": "up"}) + "\nnot json\n"
        + json.dumps({"decision_date": "13/01/2013", "rep": 1, "answer": "up"}) + "\n")
    (model / "notes.txt").write_text("an extra file")
    db = new_warehouse(tmp_path / "small")
    out = hindsight(db, "load", "hindsightbench", root).stdout
    assert "tiny:1.0" in out and "3 cells" in out and "3 sketches" in out and "3 quarantined" in out
    reasons = [r[0] for r in query(db, "select reason from raw.rejected_rows where kind = 'hindsightbench' order by line_number")]
    assert len(reasons) == 3 and all("malformed" in r for r in reasons)
    statuses = dict(query(db, "select arm || '/' || decision_date, cell_status from raw.hb_cells"))
    assert statuses == {"D/2013-01-15": "sketches", "D/2013-02-15": "sketches", "M/2013-01-15": "parse_error"}
    # two dates cover no full window: every contrast is gated, with its reason, and the build passes
    hindsight(db, "build")
    assert_dbt_passed(db)
    row = query(db, "select e2_parity, e3_parity, e2_est, undefined_reasons from agg_hb_audit_rows")[0]
    assert row[:3] == (False, False, None)
    assert "e2: D and M do not both cover the full windows (parity gate)" in row[3]


def test_warehouse_draws_option(audit, tmp_path):
    db, rows, _, _ = audit
    copy = tmp_path / "draws.duckdb"
    copy.write_bytes(db.read_bytes())
    hindsight(copy, "build", "--select", "int_hb_audit_estimates+", "--vars", "{hb_bootstrap_draws: warehouse}")
    for key, low, high, estimate in query(copy, "select model_key, e2_lo, e2_hi, e2_est from agg_hb_audit_rows"):
        assert low < estimate < high
        assert (low, high) != pytest.approx((rows[key]["e2_lo"], rows[key]["e2_hi"]), abs=1e-9)   # another stream
        assert abs(low - rows[key]["e2_lo"]) < 0.03 and abs(high - rows[key]["e2_hi"]) < 0.03


def test_a_protocol_var_changed_once_reaches_every_model(audit, tmp_path):
    """The LAP threshold has one home (dbt_project.yml vars): a build with another value moves the
    threshold flag, the effective cutoff and the reason text together."""
    db, rows, _, _ = audit
    copy = tmp_path / "threshold.duckdb"
    copy.write_bytes(db.read_bytes())
    hindsight(copy, "build", "--select", "agg_hb_lap_series+", "--vars", "{hb_lap_threshold: 0.3}")
    flags = query(copy, "select count(*) filter (where is_above_threshold <> (lap > 0.3)), "
                        "count(*) filter (where is_above_threshold) from agg_hb_lap_series")[0]
    assert flags[0] == 0 and flags[1] > 0
    expected = dict(query(copy, """select model_key, max(decision_month) filter (where lap > 0.3)
                                   from agg_hb_lap_series group by model_key"""))
    cutoffs = dict(query(copy, "select model_key, empirical_cutoff from agg_hb_audit_rows"))
    assert cutoffs == expected
    assert cutoffs != {key: row["empirical_cutoff"] for key, row in rows.items()}   # 0.1 gives other cutoffs


def _cell_metas(root, model):
    """{(arm, replicate, date): 03_run_meta.json} of one model's cells that have one."""
    bench = root / "hindsight" / "outputs" / "bench" / model
    return {(meta.parent.parent.parent.name, int(meta.parent.parent.name[3:]), meta.parent.name): json.loads(meta.read_text())
            for meta in bench.glob("*/rep*/*/03_run_meta.json")}


def test_rebuilt_prompts_are_byte_identical_to_the_release(audit):
    """Every prompt dbt builds hashes to the user_sha256 the release recorded for the prompt it sent
    (all 2,064 cells of the two models whose metadata keep it), and the M prompts equal KT-1's."""
    db, _, _, root = audit
    hashes = {(arm, replicate, date): sha for arm, replicate, date, sha in query(
        db, "select arm, replicate, decision_date, user_sha256 from fct_hb_requests where kind = 'arm'")}
    for model in ("llama-3.1-70b-awq", "qwen3.6-27b-fp8"):
        metas = _cell_metas(root, model)
        assert len(metas) == 2064
        assert {key: meta["user_sha256"] for key, meta in metas.items()} == {key: hashes[key] for key in metas}
    masked = dict(query(db, "select decision_date, user_text from fct_hb_requests where kind = 'arm' and arm = 'M' and replicate = 1"))
    nodes = sorted((root / "hindsight" / "outputs" / "kt1" / "masked_nodes").iterdir())
    assert len(nodes) == 240
    assert all((node / "02_masked_prompt.txt").read_text() == masked[node.name] for node in nodes)
    tiers = query(db, """select count(*) filter (where in_smoke), count(*) filter (where in_reduced),
                                count(*) filter (where in_full_1rep), count(*) filter (where in_full),
                                count(*) filter (where in_control) from fct_hb_requests""")[0]
    assert tiers == (8, 3098, 6450, 7482, 480)


def test_parsers_reproduce_each_cells_counts_and_valid(audit):
    """On the raw replies of gpt-5.4-mini and claude-haiku-4-5, parser v2 gives each cell's valid and
    invalid counts of 03_run_meta.json and the published VALID; v1 differs exactly on the cells the
    release recovered with v2 (its disclosed deviation), which the marts show side by side."""
    db, rows, published, root = audit
    for model in ("gpt-5.4-mini", "claude-haiku-4-5"):
        metas = _cell_metas(root, model)
        for version in ("v1", "v2"):
            parsed = {(arm, replicate, date): (valid, invalid) for arm, replicate, date, valid, invalid in query(
                db, """select arm, replicate, decision_date, valid_count, invalid_count from intermediate.int_hb_reply_parses
                       where model_key = ? and kind = 'arm' and parser_version = ? and parse_status = 'ok'""", [model, version])}
            differing = sum(parsed.get(key) != (meta["valid_count"], meta["invalid_count"]) for key, meta in metas.items())
            assert differing == (10 if (model, version) == ("gpt-5.4-mini", "v1") else 0), (model, version)
        assert rows[model]["parser_version"] == "v2"
        assert rows[model]["valid_sketch_rate"] == pytest.approx(float(published[model]["valid_sketch_rate"]), abs=1e-12)
    versions = dict(query(db, """select parser_version, valid_sketch_rate from agg_hb_parser_versions
                                 where model_key = 'gpt-5.4-mini'"""))
    assert versions["v2"] == pytest.approx(float(published["gpt-5.4-mini"]["valid_sketch_rate"]))
    assert versions["v1"] < versions["v2"]


def test_a_release_of_raw_replies_only_gives_the_same_row(audit, tmp_path):
    """A release folder holding only each cell's 04_raw_response.txt (no 01_sketches_valid.json, no
    counts) and the probe files yields the row of the full folder: the parsers decide the cells."""
    db, rows, _, root = audit
    release = tmp_path / "release"
    release.mkdir()
    (release / "macrochain").symlink_to(root / "macrochain")
    source = root / "hindsight" / "outputs" / "bench" / "gpt-5.4-mini"
    target = release / "hindsight" / "outputs" / "bench" / "gpt-replies-only"
    for reply in source.glob("*/rep*/*/04_raw_response.txt"):
        cell = target / reply.relative_to(source).parent
        cell.mkdir(parents=True)
        (cell / "04_raw_response.txt").write_bytes(reply.read_bytes())
    for probe in ("date_probe_results.jsonl", "lap_probe_results.jsonl"):
        (target / probe).write_bytes((source / probe).read_bytes())
    copy = tmp_path / "replies.duckdb"
    copy.write_bytes(db.read_bytes())
    hindsight(copy, "load", "hindsightbench", release)
    hindsight(copy, "build", "--select", "stg_raw__hb_responses+")     # the replies' table, then all it feeds
    names = [d[0] for d in duckdb.connect(str(copy), read_only=True).execute("select * from agg_hb_audit_rows limit 0").description]
    replica = dict(zip(names, query(copy, "select * from agg_hb_audit_rows where model_key = 'gpt-replies-only'")[0]))
    original = rows["gpt-5.4-mini"]
    registry = {"model_key", "row_version", "display", "generation", "provider", "tier", "sampling", "serving_quantization",
                "thinking_regime", "retrieval", "vendor_cutoff", "vendor_cutoff_read_on", "cutoff_vs_vendor_months",
                "published_lap_at_chance", "undefined_reasons"}
    for column in set(names) - registry:
        assert replica[column] == pytest.approx(original[column], nan_ok=True) if isinstance(original[column], float) \
            else replica[column] == original[column], column
