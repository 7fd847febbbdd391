"""HindsightBench's Python steps, each a function of named frames and the model's parameters (its
dbt config, values as texts): what the DuckDB Python models (models/intermediate/hindsightbench/*.py)
run in-process and the Spark models run on an executor through the table function
hindsight_frames (ingest/spark/functions.py). One implementation, so the engines cannot drift.

A step that is incremental by model takes `todo`, which maps each model's input_fingerprint to the
models to compute: an incremental DuckDB build passes the models whose fingerprint changed
(hb_robustness.models_to_compute); by default every model is computed.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from ingest.stats.hb_audit import AuditParams, audit_estimates
from ingest.stats.hb_parsers import PARSER_VERSIONS, parse_lap, parse_rec, parse_sketches_by_version
from ingest.stats.hb_robustness import (
    Lexicon,
    fingerprint,
    lap_sensitivity,
    per_model_fingerprints,
    serving_verdict,
    transcript_audit,
    window_perturbation,
)

Frames = dict[str, pd.DataFrame]
Todo = Callable[[dict[str, str]], set[str]]


def every_model(fingerprints: dict[str, str]) -> set[str]:
    return set(fingerprints)


def _stamped(out: pd.DataFrame, fingerprints: dict[str, str]) -> pd.DataFrame:
    out["input_fingerprint"] = out["model_key"].map(fingerprints).astype("string")
    out["computed_at"] = pd.Timestamp.now(tz="UTC").tz_localize(None)   # when: an append leaves the others' as they were
    return out


REPLY_KEYS = ["model_key", "source", "kind", "arm", "decision_date", "replicate", "sample", "request_id",
              "is_truncated", "probe_set", "temperature"]


def hb_reply_parses(frames: Frames, parameters: dict, todo: Todo = every_model,
                    fingerprints: dict[str, str] | None = None) -> pd.DataFrame:
    """int_hb_reply_parses: every reply (frame `replies`) x sketch parser version; truncated replies kept,
    unparsed. Built column by column: one parse of a reply serves every version. A model's digest is
    its replies and the parser versions: a new version parses every reply again. FINGERPRINTS, when
    the caller digested the replies itself (changed_models_rows), come with only the replies to parse."""
    replies = frames["replies"]
    if fingerprints is None:
        fingerprints = per_model_fingerprints(replies, sorted(replies["model_key"].unique()), PARSER_VERSIONS)
    replies = replies[replies["model_key"].isin(todo(fingerprints))]
    n, versions = len(replies), len(PARSER_VERSIONS)
    parsed = {c: [] for c in ("parse_status", "valid_count", "invalid_count", "directions")}
    rec, lap, lap_strict = [None] * n, [None] * n, [None] * n
    texts, kinds = replies["reply_text"].fillna("").tolist(), replies["kind"].tolist()
    truncated = replies["is_truncated"].fillna(False).astype(bool).tolist()
    for i, (text, kind, cut) in enumerate(zip(texts, kinds, truncated)):
        sketches = parse_sketches_by_version(text) if kind == "arm" and not cut else (None,) * versions
        for one in sketches:
            parsed["parse_status"].append("truncated" if cut else (one.status if one else "ok"))
            parsed["valid_count"].append(one.valid_count if one else None)
            parsed["invalid_count"].append(one.invalid_count if one else None)
            parsed["directions"].append(one.directions if one else None)
        if not cut:
            if kind == "rec":
                rec[i] = parse_rec(text)
            elif kind == "lap":
                lap[i], lap_strict[i] = parse_lap(text), parse_lap(text, "strict")
    columns = {key: np.repeat(replies[key].to_numpy(object) if key != "is_truncated" else np.array(truncated), versions)
               for key in REPLY_KEYS}
    columns["parser_version"] = np.tile(np.array(PARSER_VERSIONS, dtype=object), n)
    columns.update(parsed)
    for name, values in (("estimated_date", rec), ("lap_answer", lap), ("lap_answer_strict", lap_strict)):
        columns[name] = np.repeat(np.array(values, dtype=object), versions)
    # typed even when empty (a warehouse without replies), so the marts' contracts hold
    types = {"replicate": "Int32", "sample": "Int32", "temperature": "float64", "valid_count": "Int32",
             "invalid_count": "Int32", "is_truncated": "boolean"}
    names = [*REPLY_KEYS, "parser_version", "parse_status", "valid_count", "invalid_count", "directions",
             "estimated_date", "lap_answer", "lap_answer_strict"]
    out = pd.DataFrame({c: columns[c] for c in names}, columns=names).astype({c: types.get(c, "string") for c in names})
    return _stamped(out, fingerprints)


def hb_audit_estimates(frames: Frames, parameters: dict, todo: Todo = every_model) -> pd.DataFrame:
    """int_hb_audit_estimates: the E1-E3 CIs, delta and the LAP chance test (frames counts, dates, lap).
    Each model's row depends on its own counts and LAP, the dates and the protocol (a fresh generator
    per model), so a model is computed alone."""
    params = AuditParams.from_vars(parameters.get)
    counts, dates, lap = frames["counts"], frames["dates"], frames["lap"]
    per_lap = dict(tuple(lap.groupby("model_key", sort=False))) if len(lap) else {}
    fingerprints = {key: fingerprint(per_lap.get(key, lap.iloc[0:0]), value) for key, value in
                    per_model_fingerprints(counts, sorted(counts["model_key"].unique()), fingerprint(dates), params).items()}
    chosen = todo(fingerprints)
    out = audit_estimates(counts[counts["model_key"].isin(chosen)], dates, lap[lap["model_key"].isin(chosen)], params)
    return _stamped(out, fingerprints)


def hb_window_perturbation(frames: Frames, parameters: dict, todo: Todo = every_model) -> pd.DataFrame:
    """int_hb_window_perturbation (frames counts, dates, specs, events)."""
    params = AuditParams.from_vars(parameters.get)
    counts, dates, specs, events = frames["counts"], frames["dates"], frames["specs"], frames["events"]
    keys = sorted(counts["model_key"].unique())
    fingerprints = per_model_fingerprints(counts, keys, fingerprint(dates), fingerprint(specs), fingerprint(events), params)
    out = window_perturbation(counts[counts["model_key"].isin(todo(fingerprints))], dates, specs, events, params)
    return _stamped(out, fingerprints)


def hb_lap_sensitivity(frames: Frames, parameters: dict, todo: Todo = every_model) -> pd.DataFrame:
    """int_hb_lap_sensitivity (frames rep_counts, counts, dates, profiles: the seed sampling_profiles)."""
    params = AuditParams.from_vars(parameters.get)
    profiles = frames["profiles"]
    options = {
        "thetas": [float(t) for t in str(parameters["hb_lap_thetas"]).split()],
        "reference_theta": float(parameters["hb_lap_threshold"]),
        # the LAP probes' temperature as the protocol's sampling profile sets it
        "protocol_temperature": float(profiles.loc[profiles["profile"] == parameters["hb_lap_profile"], "temperature"].iloc[0]),
        "subsets": int(parameters["hb_lap_jackknife_subsets"]),
        "significance_t": float(parameters["hb_delta_significance_t"]),
    }
    rep_counts, dates = frames["rep_counts"], frames["dates"]
    r_counts = frames["counts"][frames["counts"]["arm"] == "R"]
    keys = sorted(rep_counts["model_key"].unique())
    per_model = dict(tuple(rep_counts.groupby("model_key", sort=False)))      # one pass, not a filter per model
    fingerprints = {key: fingerprint(per_model[key], value)
                    for key, value in per_model_fingerprints(r_counts, keys, fingerprint(dates), params,
                                                             sorted(options.items())).items()}
    out = lap_sensitivity(rep_counts[rep_counts["model_key"].isin(todo(fingerprints))], r_counts, dates, params, **options)
    return _stamped(out, fingerprints)


def hb_transcript_audit(frames: Frames, parameters: dict, todo: Todo = every_model,
                        fingerprints: dict[str, str] | None = None) -> pd.DataFrame:
    """int_hb_transcript_audit (frames replies, nodes, patterns: the seed hb_transcript_patterns).
    FINGERPRINTS as in hb_reply_parses, digested with transcript_audit_inputs(frames)."""
    replies, patterns = frames["replies"], frames["patterns"]
    if fingerprints is None:
        fingerprints = per_model_fingerprints(replies, sorted(replies["model_key"].unique()), *transcript_audit_inputs(frames))
    nodes = frames["nodes"][["decision_date", "fake_date"]]
    out = transcript_audit(replies[replies["model_key"].isin(todo(fingerprints))], nodes, Lexicon(patterns))
    return _stamped(out, fingerprints)


def transcript_audit_inputs(frames: Frames) -> tuple[str, str]:
    """The shared inputs of every model's transcript audit: the nodes' dates and the patterns."""
    return fingerprint(frames["nodes"][["decision_date", "fake_date"]]), fingerprint(frames["patterns"])


def hb_serving_stability(frames: Frames, parameters: dict) -> pd.DataFrame:
    """int_hb_serving_stability: per declared serving pair (frame registry) x endpoint, both rows'
    estimates and CIs (frame rows: int_hb_window_perturbation) and the BM-2a verdict."""
    width = float(parameters["hb_serving_underpowered_width"])
    registry, rows = frames["registry"], frames["rows"]
    rows = rows[rows["perturbation"] == "none"].set_index(["model_key", "endpoint"])
    out = []
    for variant in registry[registry["serving_variant_of"].notna()].itertuples(index=False):
        for endpoint in ("E2", "E3"):
            cells = {}
            for role, key in (("reference", variant.serving_variant_of), ("variant", variant.model_key)):
                found = rows.loc[(key, endpoint)] if (key, endpoint) in rows.index else None
                cells[role] = tuple(None if found is None or pd.isna(found[c]) else float(found[c])
                                    for c in ("estimate", "ci_low", "ci_high"))
            verdict, reason = serving_verdict(cells["reference"], cells["variant"], width)
            out.append({"reference_key": variant.serving_variant_of, "variant_key": variant.model_key, "endpoint": endpoint,
                        "reference_estimate": cells["reference"][0], "reference_ci_low": cells["reference"][1],
                        "reference_ci_high": cells["reference"][2], "variant_estimate": cells["variant"][0],
                        "variant_ci_low": cells["variant"][1], "variant_ci_high": cells["variant"][2],
                        "verdict": verdict, "reason": reason})
    columns = {"reference_key": "string", "variant_key": "string", "endpoint": "string", "reference_estimate": "float64",
               "reference_ci_low": "float64", "reference_ci_high": "float64", "variant_estimate": "float64",
               "variant_ci_low": "float64", "variant_ci_high": "float64", "verdict": "string", "reason": "string"}
    return pd.DataFrame(out, columns=list(columns)).astype(columns)


STEPS = {"hb_reply_parses": hb_reply_parses, "hb_audit_estimates": hb_audit_estimates,
         "hb_window_perturbation": hb_window_perturbation, "hb_lap_sensitivity": hb_lap_sensitivity,
         "hb_transcript_audit": hb_transcript_audit, "hb_serving_stability": hb_serving_stability}
