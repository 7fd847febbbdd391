"""`hindsight audit compare`: the serving-stability check of two configurations of one model
(hindsightbench.md §7.1, the release's check_serving_stability.py): both rows' estimates and 95% CIs
from agg_hb_audit_rows and the BM-2a verdict of ingest/stats/hb_robustness.serving_verdict, the rule
agg_hb_serving_stability applies to every pair the registry declares."""
from __future__ import annotations

from ingest.config import protocol_var
from ingest.db import fetch_dicts, require_marts
from ingest.errors import InputError
from ingest.stats.hb_robustness import serving_verdict

# metric -> (estimate, CI low, CI high) columns of agg_hb_audit_rows; P1 has no bootstrap CI
METRICS = {"E2": ("e2_est", "e2_lo", "e2_hi"), "E3": ("e3_est", "e3_lo", "e3_hi"),
           "E1": ("e1_est", "e1_lo", "e1_hi"), "P1": ("p1_calendar", None, None)}

ADVICE = """\
Minimal sweep before trusting this row across serving configs:
  1. Run the D and M arms (the E2 ingredients) under (i) the serving config you will publish and
     (ii) one reference precision of the same weights (`hindsight audit run --tier full --key ...
     --serving-quantization ... --serving-variant-of REFERENCE_KEY`).
  2. Compare the pair. STABLE -> the row is portable across the two configs; report the config
     alongside the row anyway. UNSTABLE -> report per-config rows; do not average or substitute.
     UNDERPOWERED -> double the replicates on both configs and compare again.
  3. Never mix official-API rows with community-quantized checkpoints of 'the same model' without
     this check: BM-2a measured a -13.7pp E2 shift (verdict flip) from serving precision alone."""


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value * 100:+.2f}"


def compare(con, key_a: str, key_b: str, metric: str = "E2") -> tuple[str, list[str]]:
    """(verdict, printed lines) for two registry keys."""
    if metric not in METRICS:
        raise InputError("--metric", f"unknown metric {metric!r}", f"use one of {', '.join(METRICS)}")
    if key_a == key_b:
        raise InputError("--model-b", "both configurations are the same row", "give the keys of two serving configurations")
    require_marts(con, "agg_hb_audit_rows")
    estimate, low, high = METRICS[metric]
    rows = {}
    for key in (key_a, key_b):
        found = fetch_dicts(con, f"""select model_key, row_version, serving_quantization, {estimate} as estimate,
                                     {low or 'null'} as ci_low, {high or 'null'} as ci_high
                                     from agg_hb_audit_rows where model_key = ?""", [key])
        if not found:
            known = [r[0] for r in con.execute("select model_key from agg_hb_audit_rows order by 1").fetchall()]
            raise InputError("--model-a" if key == key_a else "--model-b", f"no audit row {key!r}",
                             f"use a key of agg_hb_audit_rows ({', '.join(known) or 'none built'}), or audit it and `hindsight build`")
        rows[key] = found[0]
    width = float(protocol_var("hb_serving_underpowered_width"))
    cells = [tuple(rows[k][c] for c in ("estimate", "ci_low", "ci_high")) for k in (key_a, key_b)]
    verdict, reason = serving_verdict(cells[0], cells[1], width)
    lines = [f"serving-stability check - metric {metric} (the rows' own bootstrap CIs, agg_hb_audit_rows)"]
    for key in (key_a, key_b):
        row = rows[key]
        span = "" if row["ci_low"] is None else (f"  CI95 [{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]  "
                                                 f"width {(row['ci_high'] - row['ci_low']) * 100:.2f}pp")
        lines.append(f"  {key:<24} {_fmt(row['estimate'])}pp{span}   (row version {row['row_version']}, "
                     f"serving {row['serving_quantization'] or 'unrecorded'})")
    if metric == "P1":
        lines.append("  P1 has no bootstrap CI in the audit row: the rule cannot certify it; compare E2 or E3")
    lines += [f"  VERDICT: {verdict} - {reason}", "", ADVICE]
    return verdict, lines
