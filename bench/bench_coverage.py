"""Coverage of the warehouse's case-clustered bootstrap intervals, per method, where the truth is known,
and from how many cases each method holds its promise.

Data sets are simulated at 2, 4, 8, 16 and 40 cases a cohort and the paper's 131 (5-15 questions per case), with a
case-level random effect on the logit scale (SD 0.5: low intra-case correlation; SD 1.5: high), for
single metrics (Acc: binary; HTR: ordinal grades 0, 1/3, 2/3, 1) and paired ones from correlated full
and masked answers (dHTR: full and masked ordinal HTR sharing the case effect, masked at half the
rate; AIR: the masked answer differs from the full one; HBR: 1[masked correct] x full trap), at
rates 0.02 to 0.5, and differences between two models answering the same questions of the same
cases (Acc: model B at half model A's rate, sharing the case effect; the null: both at A's rate), as
`hindsight metrics --compare` forms them. Each data set's interval comes from the warehouse's own draws
(ingest.stats.bootstrap.weights, B = 2,000) and interval code (ingest.stats.intervals for single and
paired metrics, ingest.stats.differences for differences), so what is measured is what agg_metrics and
--compare report. A per-case sum of question values is drawn exactly (a sum of
binomials given the case), so 1,000 data sets per setting take seconds.

For each method and setting: coverage of the true value with its Monte Carlo error
sqrt(c(1 - c) / data sets), mean width, and, for null dHTR settings (full = masked, truth 0), how
often "the CI excludes 0" is claimed. Runtime: about 15 minutes on two cores.

Too few cases: for each method and kind (single, paired, difference) the coverage averaged over the
kind's settings at each number of cases ("trust" in bench/results/coverage.json, with min_cases: the
smallest size from which that average stays at var interval_min_coverage, 92.5%, or above, by the rule
of ingest/stats/trust.py and the mart dim_interval_trust). --write-seed writes that table to
seeds/interval_coverage.csv, from which every interval with fewer cases is flagged.

    .venv/bin/python bench/bench_coverage.py                      # 1,000 data sets per setting
    .venv/bin/python bench/bench_coverage.py --datasets 200       # quicker look
    .venv/bin/python bench/bench_coverage.py --small --out /tmp/c.json   # CI's setting: seconds
    .venv/bin/python bench/bench_coverage.py --write-seed          # the table the flags read
    .venv/bin/python bench/bench_coverage.py --cost-warehouse W.duckdb   # the estimator models per method

With --cost-warehouse (a built warehouse, e.g. one bench_metrics.py or bench_refresh.py made), the two
estimator models (int_metric_estimates, int_metric_estimates_by_eval_target) are rebuilt once per
method with dbt and timed with dbt's own timing, against the percentile method.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ingest.config import protocol_var
from ingest.stats import bootstrap, differences, intervals, trust

PROJECT = Path(__file__).resolve().parents[1]
CASES = (2, 4, 8, 16, 40, 131)
PAPER_CASES = (40, 131)
RATES = (0.02, 0.05, 0.1, 0.3, 0.5)
CASE_SD = {"low": 0.5, "high": 1.5}
METRICS = ("acc", "htr", "delta_htr", "air", "hbr", "acc_difference")
KIND = {"acc": "single", "htr": "single", "delta_htr": "paired", "air": "paired", "hbr": "paired",
        "acc_difference": "difference"}
HBR_MASKED_CORRECT = 0.6


def expit(x):
    return 1 / (1 + np.exp(-x))


def logit(p):
    return np.log(p / (1 - p))


def case_rates(metric: str, rate: float, effects: np.ndarray, null: bool = False) -> tuple[np.ndarray, ...]:
    """Per-case success probabilities of the binomials a metric's question values are made of."""
    if metric in ("delta_htr", "acc_difference"):
        other = rate if null else rate / 2
        return expit(logit(rate) + effects), expit(logit(other) + effects)
    if metric == "hbr":
        return (HBR_MASKED_CORRECT * expit(logit(rate / HBR_MASKED_CORRECT) + effects),)
    return (expit(logit(rate) + effects),)


def truth(metric: str, rate: float, sd: float, null: bool, rng) -> float:
    """The question-weighted population mean (questions per case independent of the case effect)."""
    rates = case_rates(metric, rate, rng.normal(0, sd, 2_000_000), null)
    return float(rates[0].mean() - rates[1].mean()) if len(rates) == 2 else float(rates[0].mean())


def simulate(metric: str, rate: float, sd: float, n_cases: int, datasets: int, null: bool, rng):
    """Per-case sums of question values and numbers of questions: (data sets x cases) each; for a
    difference, the second model's sums too (on the same questions)."""
    questions = rng.integers(5, 16, size=(datasets, n_cases))
    rates = case_rates(metric, rate, rng.normal(0, sd, size=(datasets, n_cases)), null)
    if metric == "acc_difference":
        return rng.binomial(questions, rates[0]).astype(float), questions.astype(float), rng.binomial(questions, rates[1]).astype(float)
    if metric in ("htr", "delta_htr"):                                  # ordinal grades: Bin(3, p) / 3
        sums = rng.binomial(3 * questions, rates[0]) / 3
        if metric == "delta_htr":
            sums = sums - rng.binomial(3 * questions, rates[1]) / 3
    else:
        sums = rng.binomial(questions, rates[0]).astype(float)
    return sums, questions.astype(float)


def _figures(low, high, target: float, seconds: float) -> dict[str, float]:
    covered = (low <= target) & (target <= high)
    coverage = float(np.mean(covered))
    return {"coverage": round(coverage, 4),
            "mc_error": round(float(np.sqrt(coverage * (1 - coverage) / len(covered))), 4),
            "mean_width": round(float(np.nanmean(high - low)) if np.isfinite(high - low).any() else float("nan"), 4),
            "excludes_zero": round(float(np.mean((low > 0) | (high < 0))), 4),
            "seconds": round(seconds, 3)}


def evaluate_difference(sums_a, counts, sums_b, w, target: float) -> dict[str, dict[str, float]]:
    """Every method's figures for the difference of two models on the same questions (--compare's code)."""
    strata = np.zeros(counts.shape[1], dtype=np.int64)                    # one cohort
    found = {}
    for method in intervals.METHODS:
        started = time.perf_counter()
        stats = differences.difference_statistics(sums_a.T, counts.T, sums_b.T, counts.T, strata, [w], method)
        found[method] = _figures(stats["ci_low"], stats["ci_high"], target, time.perf_counter() - started)
    return found


def evaluate(sums, counts, w, target: float) -> dict[str, dict[str, float]]:
    """Every method's coverage, its Monte Carlo error, mean width and rate of excluding 0."""
    sums_t, counts_t = sums.T, counts.T                                  # cases x data sets ("cells")
    replicate_sums, replicate_counts = w @ sums_t, w @ counts_t
    estimate = sums_t.sum(axis=0) / counts_t.sum(axis=0)
    se = np.sqrt(((sums_t - counts_t * estimate) ** 2).sum(axis=0)) / counts_t.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        replicate_estimates = replicate_sums / replicate_counts
    moments = (w @ (sums_t * sums_t), w @ (sums_t * counts_t), w @ (counts_t * counts_t))      # studentized's
    found = {}
    for method in intervals.METHODS:
        started = time.perf_counter()
        low, high = intervals.interval(method, estimate, se, replicate_estimates, sums_t, counts_t, replicate_counts,
                                      moments)
        found[method] = _figures(low, high, target, time.perf_counter() - started)
    return found


def coverage_table(rows: list[dict]) -> pd.DataFrame:
    """Per method, kind and size: the coverage averaged over the kind's settings (the seed's columns)."""
    table = []
    for method in intervals.METHODS:
        for kind in dict.fromkeys(KIND.values()):
            mine = [r for r in rows if not r["metric"].endswith("_null") and KIND[r["metric"]] == kind]
            for n in sorted({r["cases"] for r in mine}):
                at = [r[method]["coverage"] for r in mine if r["cases"] == n]
                table.append({"ci_method": method, "kind": kind, "cases": n, "mean_coverage": round(float(np.mean(at)), 4),
                              "settings": len(at)})
    return pd.DataFrame(table)


def cost(db: Path) -> dict:
    """Seconds of the estimator models per interval method on one warehouse (best of two)."""
    models = ["int_metric_estimates", "int_metric_estimates_by_eval_target"]
    seconds = {}
    for method in intervals.METHODS:
        runs = []
        for _ in range(2):
            done = subprocess.run([str(Path(sys.executable).parent / "dbt"), "run", "--select", *models, "--vars",
                                   json.dumps({"ci_method": method}), "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT),
                                   "--target-path", str(db.parent / "cost-target")],
                                  env={**os.environ, "HINDSIGHT_DB": str(db)}, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(done.stdout[-3000:])
            results = json.loads((db.parent / "cost-target" / "run_results.json").read_text())["results"]
            runs.append(sum(r["execution_time"] for r in results))
        seconds[method] = round(min(runs), 2)
    return {"warehouse": str(db), "seconds": seconds,
            "vs_percentile": {m: round(seconds[m] / seconds["percentile"], 2) for m in intervals.METHODS}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--cost-warehouse", type=Path)
    parser.add_argument("--small", action="store_true",
                        help="CI's setting: 2, 8 and 40 cases, two rates, 100 data sets, 400 replicates (seconds)")
    parser.add_argument("--out", type=Path, help="where to write the figures (default bench/results/coverage.json)")
    parser.add_argument("--write-seed", action="store_true",
                        help="write the coverage by cases to seeds/interval_coverage.csv (the table the flags read)")
    args = parser.parse_args()
    if args.cost_warehouse:
        figures = cost(args.cost_warehouse.resolve())
        name = f"coverage_cost_{args.cost_warehouse.parent.name}.json"
        (PROJECT / "bench" / "results" / name).write_text(json.dumps(figures, indent=2))
        print(json.dumps(figures, indent=2))
        return
    cases, rates = ((2, 8, 40), (0.1, 0.3)) if args.small else (CASES, RATES)
    if args.small:
        args.datasets, args.replicates = min(args.datasets, 100), min(args.replicates, 400)
    rng = np.random.default_rng(20261130)
    settings = [(n, rate, icc, metric, False) for n in cases for rate in rates for icc in CASE_SD for metric in METRICS]
    settings += [(n, rate, icc, metric, True) for n in cases for rate in (0.05, 0.3) for icc in CASE_SD
                 for metric in ("delta_htr", "acc_difference")]
    started, rows = time.perf_counter(), []
    weights = {n: bootstrap.weights(2026, f"coverage-{n}", n, args.replicates) for n in cases}
    for n_cases, rate, icc, metric, null in settings:
        target = truth(metric, rate, CASE_SD[icc], null, rng)
        simulated = simulate(metric, rate, CASE_SD[icc], n_cases, args.datasets, null, rng)
        figures = (evaluate_difference(*simulated, weights[n_cases], target) if metric == "acc_difference"
                   else evaluate(*simulated, weights[n_cases], target))
        rows.append({"cases": n_cases, "rate": rate, "icc": icc, "metric": metric + ("_null" if null else ""),
                     "truth": round(target, 5), **figures})
    # the summary (docs/clinical-benchmark.md, which ci_method to choose): single and paired metrics at the
    # paper's sizes, where a cohort has its cases; smaller cohorts are the coverage table's
    paper = [r for r in rows if r["cases"] in PAPER_CASES and KIND[r["metric"].removesuffix("_null")] != "difference"] or rows
    summary = {method: {"settings": len(paper),
                        "worst_coverage": min(r[method]["coverage"] for r in paper),
                        "settings_within_95_pm_1": sum(abs(r[method]["coverage"] - 0.95) <= 0.01 for r in paper),
                        "mean_coverage_rate_le_0.05": round(float(np.mean([r[method]["coverage"] for r in paper
                                                                             if r["rate"] <= 0.05] or [np.nan])), 4),
                        "null_excludes_zero": round(float(np.mean([r[method]["excludes_zero"] for r in paper
                                                                   if r["metric"].endswith("_null")] or [np.nan])), 4),
                        "seconds": round(sum(r[method]["seconds"] for r in rows), 2)}
               for method in intervals.METHODS}
    table = coverage_table(rows)
    level = float(protocol_var("interval_min_coverage"))
    thresholds = trust.derive(table, level).groupby(["ci_method", "kind"], sort=False)["min_cases"].first()
    figures = {"datasets_per_setting": args.datasets, "replicates": args.replicates, "settings": len(rows),
               "seconds": round(time.perf_counter() - started, 1), "min_coverage": level,
               "trust": {f"{m}/{k}": {"method": m, "kind": k, "min_cases": None if pd.isna(thresholds[m, k]) else int(thresholds[m, k]),
                                      "mean_coverage_by_cases": {int(r.cases): r.mean_coverage for r in
                                                                 table[(table.ci_method == m) & (table.kind == k)].itertuples()}}
                         for m, k in thresholds.index},
               "summary": summary, "rows": rows}
    if args.write_seed:
        table.to_csv(trust.SEED, index=False, lineterminator="\n", float_format="%.4f")
        print(f"{len(table)} rows -> {trust.SEED}")
    out = args.out or PROJECT / "bench" / "results" / "coverage.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2))
    print(json.dumps({k: v for k, v in figures.items() if k not in ("rows", "trust")}, indent=2))
    print(f"{'method/kind':24} " + " ".join(f"{n:>6}" for n in cases) + "  min_cases")
    for key, t in figures["trust"].items():
        print(f"{key:24} " + " ".join(f"{t['mean_coverage_by_cases'].get(n, float('nan')):>6.3f}" for n in cases)
              + f"  {t['min_cases']}")
    print(f"{'cases':>5} {'rate':>5} {'icc':4} {'metric':14} " + " ".join(f"{m:>22}" for m in intervals.METHODS))
    for r in rows:
        print(f"{r['cases']:>5} {r['rate']:>5} {r['icc']:4} {r['metric']:14} "
              + " ".join(f"{r[m]['coverage']:>8.3f} ±{r[m]['mc_error']:.3f} w{r[m]['mean_width']:.3f}" for m in intervals.METHODS))


if __name__ == "__main__":
    main()
