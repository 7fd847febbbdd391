"""`hindsight export eee`: results as Every Eval Ever records (schema 0.3.0), the format results are
shared in (https://github.com/evaleval/every_eval_ever).

Per model and benchmark, one aggregate record `data/<benchmark>/<developer>/<model>/<uuid>.json`:
- clinical-hindsight-bias: one result per agg_metrics row (cohort x condition x visibility x prompt
  variant x metric) with its estimate, 95% interval and method, clustered standard error, B and the
  numbers of questions and cases; beside it `<uuid>_samples.jsonl`, one line per scored answer and
  per-answer metric (acc, htr: its score, the question, reference and trap, the answer, and the
  cell as string metadata), linked to the result it counts in;
- hindsightbench: the audit row of agg_hb_audit_rows (E1, E2, E3 with their intervals, P1, δ and
  the rest of the row's numbers as results; its labels and gates as details).

The model's id is `provider/model` (the warehouse's `provider:model`), which is also its folder
(the datastore's rule: the id's first part is the developer). Ids and times come from the data
(the uuid hashes the benchmark and model; the times are the newest answer's load), so exporting
the same warehouse twice writes identical files. Rows with no estimate are left out and counted.
Writing needs no every_eval_ever (which needs Python >= 3.12); the tests validate with it.
"""
from __future__ import annotations

import hashlib
import json
import math
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ingest.config import __version__
from ingest.db import fetch_dicts
from ingest.errors import InputError

SCHEMA_VERSION = "0.3.0"
CLINICAL, HINDSIGHTBENCH = "clinical-hindsight-bias", "hindsightbench"
# (lower is better, min, max) of each clinical metric (dim_metrics)
CLINICAL_METRICS = {"acc": (False, 0, 1), "htr": (True, 0, 1), "delta_acc": (True, -1, 1), "delta_htr": (True, -1, 1),
                    "air": (True, 0, 1), "hbr": (True, 0, 1)}
# the audit row's numbers: column -> (name, lower is better, min, max, interval columns)
# the audit row's numbers: column -> (name, lower is better, min, max, interval columns); a leak
# measure is better low, the access proxies and the sketch rate are reported as they are
AUDIT_RESULTS = {
    "e1_est": ("E1", True, -1, 1, ("e1_lo", "e1_hi")),
    "e2_est": ("E2", True, -1, 1, ("e2_lo", "e2_hi")),
    "e3_est": ("E3", True, -1, 1, ("e3_lo", "e3_hi")),
    "p1_calendar": ("P1 (calendar)", True, -1, 1, None),
    "p1_model_relative": ("P1 (model-relative)", True, -1, 1, None),
    "delta": ("δ", True, "-Infinity", "Infinity", None),
    "recall_hit_rate": ("Recall hit rate", True, 0, 1, None),
    "valid_sketch_rate": ("Valid sketch rate", False, 0, 1, None),
    "lap_pre": ("LAP before the cutoff", False, 0, 1, None),
    "lap_post": ("LAP after the cutoff", False, 0, 1, None),
    "rec_pre_year": ("REC before the cutoff", False, 0, 1, None),
    "rec_post_year": ("REC after the cutoff", False, 0, 1, None),
}
VENDORS = {"openai": "externally_managed", "anthropic": "externally_managed"}


@dataclass
class EeeExport:
    files: list[Path] = field(default_factory=list)
    results: int = 0
    instances: int = 0
    left_out: int = 0          # rows without an estimate


def model_identity(model: str) -> tuple[str, str, str]:
    """(EEE id, developer folder, model folder) of a warehouse model name (`provider:model`)."""
    provider, sep, name = model.partition(":")
    model_id = f"{provider}/{name}" if sep and provider and name else f"local/{model}"
    parts = model_id.split("/")
    return model_id, parts[0].replace(":", "_"), "_".join(p.replace(":", "_") for p in parts[1:])


def model_info(model: str, provider: str | None = None) -> dict:
    model_id, developer, _ = model_identity(model)
    deployment = VENDORS.get(provider or developer, "unknown")
    return {"name": model, "id": model_id, "developer": developer,
            **({"inference_platform": provider} if provider else {}),
            "additional_details": {"deployment_type": deployment,
                                   "model_availability": "closed_weights" if deployment == "externally_managed" else "unknown"}}


def record_uuid(*parts: str) -> str:
    """A UUID4-shaped id (the datastore's file names) that is a hash of PARTS: stable across exports."""
    return str(uuid.UUID(bytes=hashlib.sha256("|".join(parts).encode()).digest()[:16], version=4))


def _strings(values: dict) -> dict:
    return {k: ("" if v is None else str(v).lower() if isinstance(v, bool) else str(v)) for k, v in values.items()}


def _number(value):
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else value


def _epoch(moment: datetime | None) -> str:
    return str(int(moment.replace(tzinfo=None).timestamp())) if moment else "0"


def _write(out: Path, benchmark: str, model: str, key: str, record: dict, samples: list[dict] | None) -> list[Path]:
    _, developer, folder = model_identity(model)
    base = Path("data") / benchmark / developer / folder
    (out / base).mkdir(parents=True, exist_ok=True)
    written = []
    if samples:
        lines = "".join(json.dumps(s, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n" for s in samples)
        (out / base / f"{key}_samples.jsonl").write_text(lines, encoding="utf-8")
        record["detailed_evaluation_results"] = {
            "format": "jsonl", "file_path": f"{base.as_posix()}/{key}_samples.jsonl", "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(lines.encode()).hexdigest(), "total_rows": len(samples)}
        written.append(out / base / f"{key}_samples.jsonl")
    (out / base / f"{key}.json").write_text(json.dumps(record, ensure_ascii=False, indent=2, sort_keys=True,
                                                       allow_nan=False) + "\n", encoding="utf-8")
    return [out / base / f"{key}.json", *written]


def _envelope(benchmark: str, model: str, key: str, provider: str | None, newest: datetime | None) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{benchmark}/{model_identity(model)[0]}/{key}",
        "retrieved_timestamp": _epoch(newest),
        **({"evaluation_timestamp": newest.replace(microsecond=0).isoformat() + "Z"} if newest else {}),
        "source_metadata": {"source_name": "hindsight-warehouse", "source_type": "evaluation_run",
                            "source_organization_name": "hindsight-warehouse users", "evaluator_relationship": "third_party",
                            "additional_details": {"benchmark": benchmark}},
        "eval_library": {"name": "hindsight-warehouse", "version": __version__},
        "model_info": model_info(model, provider),
        "evaluation_results": [],
    }


def _clinical_result(row: dict, labels: dict, judges: list[dict], judge_prompt: str | None) -> dict:
    lower, low, high = CLINICAL_METRICS[row["metric"]]
    cell = f"{row['cohort']}/{row['condition']}/{row['visibility']}/{row['prompt_variant']}/{row['metric']}"
    metric = {"evaluation_description": labels[row["metric"]]["definition"], "metric_id": f"clinical_hindsight_bias.{row['metric']}",
              "metric_name": labels[row["metric"]]["label"], "metric_kind": "proportion" if low == 0 else "difference",
              "metric_unit": "proportion", "lower_is_better": lower, "score_type": "continuous",
              "min_score": low, "max_score": high}
    if judges and judge_prompt:
        metric["llm_scoring"] = {"judges": judges, "input_prompt": judge_prompt,
                                 "additional_details": {"used_for": "free-response answers"}}
    uncertainty = {"num_samples": int(row["n_questions"]), "num_bootstrap_samples": int(row["bootstrap_replicates"])}
    if _number(row["ci_low"]) is not None and _number(row["ci_high"]) is not None:
        uncertainty["confidence_interval"] = {"lower": row["ci_low"], "upper": row["ci_high"], "confidence_level": 0.95,
                                              "method": f"{row['ci_method']} case-clustered bootstrap"}
    if _number(row["se_clustered"]) is not None:
        uncertainty["standard_error"] = {"value": row["se_clustered"], "method": "case-clustered bootstrap"}
    return {"evaluation_result_id": cell, "evaluation_name": f"{labels[row['metric']]['label']}: {cell}",
            "source_data": {"dataset_name": f"{CLINICAL}/{row['cohort']}", "source_type": "other",
                            "additional_details": {"cohort": row["cohort"]}},
            "metric_config": metric,
            "score_details": {"score": row["estimate"], "uncertainty": uncertainty,
                              "details": _strings({k: row[k] for k in (
                                  "cohort", "condition", "visibility", "prompt_variant", "metric", "n_cases", "n_questions",
                                  "n_valid", "validity_rate", "significant", "few_cases", "caution", "mde_80", "n_finite_replicates",
                                  "bootstrap_seed") if k in row})}}


def _clinical_samples(con, model: str, model_id: str, evaluation_id: str) -> list[dict]:
    rows = fetch_dicts(con, """
        select a.response_id, a.cohort, a.case_id, a.question_id, a.condition, a.visibility, a.prompt_variant,
               a.sample_index, a.format, a.eval_target, a.answer_normalised, a.parse_status, a.acc, a.htr, a.judge_model,
               r.answer, q.question, q.options_json, q.correct_answer, q.hindsight_trap, c.input_tokens, c.output_tokens
        from fct_answers as a
        inner join dim_questions as q using (question_id)
        left join fct_answer_texts as r using (response_id)
        left join fct_llm_calls as c on c.call_id = a.call_id and c.call_status = 'ok'
        where a.model = ? and a.is_latest_in_cell and (a.acc is not null or a.htr is not null)
        order by a.cohort, a.question_id, a.condition, a.visibility, a.prompt_variant, a.sample_index""", [model])
    samples = []
    for row in rows:
        options = json.loads(row["options_json"]) if row["options_json"] else None
        for metric, score in (("acc", row["acc"]), ("htr", row["htr"])):
            if score is None:
                continue
            line = {
                "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": model_id,
                "evaluation_name": f"{metric}: {row['cohort']}/{row['condition']}/{row['visibility']}/{row['prompt_variant']}",
                "evaluation_result_id": f"{row['cohort']}/{row['condition']}/{row['visibility']}/{row['prompt_variant']}/{metric}",
                "sample_id": f"{row['response_id']}/{metric}", "interaction_type": "single_turn",
                "input": {"raw": row["question"], "reference": [row["correct_answer"] or ""],
                          **({"choices": [str(o) for o in options]} if isinstance(options, list) else {})},
                "output": {"raw": [row["answer"] if row["answer"] is not None else ""]},
                "answer_attribution": [{"turn_idx": 0, "source": "output.raw", "extracted_value": row["answer_normalised"] or "",
                                        "extraction_method": row["parse_status"] or "replayed", "is_terminal": True}],
                # acc: 1 is the reference answer; htr: 1 is the hindsight trap, so `is_correct` is "not trapped"
                "evaluation": {"score": float(score), "is_correct": bool(score == 1) if metric == "acc" else bool(score == 0)},
                "metadata": _strings({k: row[k] for k in ("question_id", "case_id", "cohort", "condition", "visibility",
                                                          "prompt_variant", "sample_index", "format", "eval_target",
                                                          "hindsight_trap", "acc", "htr", "judge_model")} | {"metric": metric}),
            }
            if row["input_tokens"] is not None and row["output_tokens"] is not None:
                line["token_usage"] = {"input_tokens": int(row["input_tokens"]), "output_tokens": int(row["output_tokens"]),
                                       "total_tokens": int(row["input_tokens"]) + int(row["output_tokens"])}
            samples.append(line)
    return samples


def export_clinical(con, out: Path, model: str, judge_prompt: str | None, result: EeeExport) -> None:
    labels = {r["metric"]: r for r in fetch_dicts(con, "select * from dim_metrics")}
    facts = con.execute("""select max(loaded_at), any_value(provider) from fct_answers where model = ?""", [model]).fetchone()
    key = record_uuid(CLINICAL, model)
    record = _envelope(CLINICAL, model, key, facts[1], facts[0])
    judges = [{"model_info": model_info(judge)} for (judge,) in con.execute(
        "select distinct judge_model from fct_answers where model = ? and judge_model is not null order by 1", [model]).fetchall()]
    calls = con.execute("""select any_value(temperature), any_value(max_tokens), count(distinct temperature), count(distinct max_tokens)
                           from fct_llm_calls where model = ? and purpose = 'answer'""", [model]).fetchone()
    generation = ({"generation_args": {**({"temperature": calls[0]} if calls[0] is not None and calls[2] == 1 else {}),
                                       **({"max_tokens": int(calls[1])} if calls[1] and calls[3] == 1 else {})}}
                  if calls and (calls[2] == 1 or calls[3] == 1) else None)
    rows = fetch_dicts(con, """select * from agg_metrics where model = ?
                               order by cohort, condition, visibility, prompt_variant, metric""", [model])
    for row in rows:
        if _number(row["estimate"]) is None:
            result.left_out += 1
            continue
        entry = _clinical_result(row, labels, judges, judge_prompt)
        if generation:
            entry["generation_config"] = generation
        record["evaluation_results"].append(entry)
    samples = _clinical_samples(con, model, record["model_info"]["id"], record["evaluation_id"])
    result.files += _write(out, CLINICAL, model, key, record, samples)
    result.results += len(record["evaluation_results"])
    result.instances += len(samples)


def export_audit_row(con, out: Path, row: dict, result: EeeExport) -> None:
    model = f"{row['provider'] or 'local'}:{row['model_key']}"
    key = record_uuid(HINDSIGHTBENCH, model, str(row["row_version"]))
    record = _envelope(HINDSIGHTBENCH, model, key, row["provider"], None)
    record["retrieved_timestamp"] = "0"            # the published rows carry no time; the id keeps them apart
    labels = _strings({k: row[k] for k in ("model_key", "row_version", "display", "generation", "p1_mode", "empirical_cutoff",
                                           "delta_gate", "vendor_cutoff", "tier", "sampling", "serving_quantization",
                                           "thinking_regime", "retrieval", "parser_version", "undefined_reasons",
                                           "lap_at_chance", "control_within_band")})
    for column, (name, lower, low, high, interval) in AUDIT_RESULTS.items():
        if _number(row[column]) is None:
            result.left_out += 1
            continue
        details = {"score": row[column], "details": labels}
        if interval and _number(row[interval[0]]) is not None and _number(row[interval[1]]) is not None:
            details["uncertainty"] = {"confidence_interval": {"lower": row[interval[0]], "upper": row[interval[1]],
                                                              "confidence_level": 0.95, "method": "bootstrap (HindsightBench)"}}
        record["evaluation_results"].append({
            "evaluation_result_id": column, "evaluation_name": name,
            "source_data": {"dataset_name": HINDSIGHTBENCH, "source_type": "other"},
            "metric_config": {"metric_id": f"hindsightbench.{column}", "metric_name": name, "lower_is_better": lower,
                              "score_type": "continuous", "min_score": low, "max_score": high},
            "score_details": details})
    result.files += _write(out, HINDSIGHTBENCH, model, key, record, None)
    result.results += len(record["evaluation_results"])


def export_eee(con, out: Path, models: list[str] | None = None, judge_prompt: str | None = None) -> EeeExport:
    """Write the EEE records of MODELS (default: every model with metrics or an audit row) under OUT/data/."""
    built = {name for (name,) in con.execute("select table_name from information_schema.tables where table_schema = 'main'").fetchall()}
    if "agg_metrics" not in built and "agg_hb_audit_rows" not in built:
        raise InputError("warehouse", "no metric mart is built", "run `hindsight build` first")
    clinical = [m for (m,) in con.execute("select distinct model from agg_metrics order by 1").fetchall()] \
        if "agg_metrics" in built else []
    audited = fetch_dicts(con, "select * from agg_hb_audit_rows order by model_key") if "agg_hb_audit_rows" in built else []
    if models:
        unknown = set(models) - set(clinical) - {r["model_key"] for r in audited}
        if unknown:
            raise InputError("--model", f"no metrics or audit row for {', '.join(sorted(unknown))}",
                             "name models as agg_metrics.model or agg_hb_audit_rows.model_key (`hindsight status` lists them)")
        clinical = [m for m in clinical if m in models]
        audited = [r for r in audited if r["model_key"] in models]
    result = EeeExport()
    for model in clinical:
        export_clinical(con, out, model, judge_prompt, result)
    for row in audited:
        export_audit_row(con, out, row, result)
    return result
