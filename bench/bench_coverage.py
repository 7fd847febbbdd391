"""Coverage of the warehouse's case-clustered bootstrap intervals, per method, where the truth is known.

Data sets are simulated at the paper's sizes (40 and 131 cases, 5-15 questions per case), with a
case-level random effect on the logit scale (SD 0.5: low intra-case correlation; SD 1.5: high), for
single metrics (Acc: binary; HTR: ordinal grades 0, 1/3, 2/3, 1) and paired ones from correlated full
and masked answers (dHTR: full and masked ordinal HTR sharing the case effect, masked at half the
rate; AIR: the masked answer differs from the full one; HBR: 1[masked correct] x full trap), at
rates 0.02 to 0.5. Each data set's interval comes from the warehouse's own draws
(ingest.stats.bootstrap.weights, B = 2,000) and interval code (ingest.stats.intervals), so what is
measured is what agg_metrics reports. A per-case sum of question values is drawn exactly (a sum of
binomials given the case), so 1,000 data sets per setting take seconds.

For each method and setting: coverage of the true value with its Monte Carlo error
sqrt(c(1 - c) / data sets), mean width, and, for null dHTR settings (full = masked, truth 0), how
often "the CI excludes 0" is claimed. Runtime: a few minutes on two cores.

    .venv/bin/python bench/bench_coverage.py                      # 1,000 data sets per setting
    .venv/bin/python bench/bench_coverage.py --datasets 200       # quicker look
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

from ingest.stats import bootstrap, intervals

PROJECT = Path(__file__).resolve().parents[1]
CASES = (40, 131)
RATES = (0.02, 0.05, 0.1, 0.3, 0.5)
CASE_SD = {"low": 0.5, "high": 1.5}
METRICS = ("acc", "htr", "delta_htr", "air", "hbr")
HBR_MASKED_CORRECT = 0.6


def expit(x):
    return 1 / (1 + np.exp(-x))


def logit(p):
    return np.log(p / (1 - p))


def case_rates(metric: str, rate: float, effects: np.ndarray, null: bool = False) -> tuple[np.ndarray, ...]:
    """Per-case success probabilities of the binomials a metric's question values are made of."""
    if metric == "delta_htr":
        masked = rate if null else rate / 2
        return expit(logit(rate) + effects), expit(logit(masked) + effects)
    if metric == "hbr":
        return (HBR_MASKED_CORRECT * expit(logit(rate / HBR_MASKED_CORRECT) + effects),)
    return (expit(logit(rate) + effects),)


def truth(metric: str, rate: float, sd: float, null: bool, rng) -> float:
    """The question-weighted population mean (questions per case independent of the case effect)."""
    rates = case_rates(metric, rate, rng.normal(0, sd, 2_000_000), null)
    return float(rates[0].mean() - rates[1].mean()) if metric == "delta_htr" else float(rates[0].mean())


def simulate(metric: str, rate: float, sd: float, n_cases: int, datasets: int, null: bool, rng):
    """Per-case sums of question values and numbers of questions: (data sets x cases) each."""
    questions = rng.integers(5, 16, size=(datasets, n_cases))
    rates = case_rates(metric, rate, rng.normal(0, sd, size=(datasets, n_cases)), null)
    if metric in ("htr", "delta_htr"):                                  # ordinal grades: Bin(3, p) / 3
        sums = rng.binomial(3 * questions, rates[0]) / 3
        if metric == "delta_htr":
            sums = sums - rng.binomial(3 * questions, rates[1]) / 3
    else:
        sums = rng.binomial(questions, rates[0]).astype(float)
    return sums, questions.astype(float)


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
        seconds = time.perf_counter() - started
        covered = (low <= target) & (target <= high)
        coverage = float(np.mean(covered))
        found[method] = {"coverage": round(coverage, 4),
                         "mc_error": round(float(np.sqrt(coverage * (1 - coverage) / len(covered))), 4),
                         "mean_width": round(float(np.nanmean(high - low)), 4),
                         "excludes_zero": round(float(np.mean((low > 0) | (high < 0))), 4),
                         "seconds": round(seconds, 3)}
    return found


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
    args = parser.parse_args()
    if args.cost_warehouse:
        figures = cost(args.cost_warehouse.resolve())
        name = f"coverage_cost_{args.cost_warehouse.parent.name}.json"
        (PROJECT / "bench" / "results" / name).write_text(json.dumps(figures, indent=2))
        print(json.dumps(figures, indent=2))
        return
    rng = np.random.default_rng(20261130)
    settings = [(n, rate, icc, metric, False) for n in CASES for rate in RATES for icc in CASE_SD for metric in METRICS]
    settings += [(n, rate, icc, "delta_htr", True) for n in CASES for rate in (0.05, 0.3) for icc in CASE_SD]
    started, rows = time.perf_counter(), []
    weights = {n: bootstrap.weights(2026, f"coverage-{n}", n, args.replicates) for n in CASES}
    for n_cases, rate, icc, metric, null in settings:
        target = truth(metric, rate, CASE_SD[icc], null, rng)
        sums, counts = simulate(metric, rate, CASE_SD[icc], n_cases, args.datasets, null, rng)
        rows.append({"cases": n_cases, "rate": rate, "icc": icc, "metric": metric + ("_null" if null else ""),
                     "truth": round(target, 5), **evaluate(sums, counts, weights[n_cases], target)})
    summary = {method: {"worst_coverage": min(r[method]["coverage"] for r in rows),
                        "settings_within_95_pm_1": sum(abs(r[method]["coverage"] - 0.95) <= 0.01 for r in rows),
                        "mean_coverage_rate_le_0.05": round(float(np.mean([r[method]["coverage"] for r in rows
                                                                             if r["rate"] <= 0.05])), 4),
                        "null_excludes_zero": round(float(np.mean([r[method]["excludes_zero"] for r in rows
                                                                   if r["metric"].endswith("_null")])), 4),
                        "seconds": round(sum(r[method]["seconds"] for r in rows), 2)}
               for method in intervals.METHODS}
    figures = {"datasets_per_setting": args.datasets, "replicates": args.replicates, "settings": len(rows),
               "seconds": round(time.perf_counter() - started, 1), "summary": summary, "rows": rows}
    out = PROJECT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "coverage.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps({k: v for k, v in figures.items() if k != "rows"}, indent=2))
    print(f"{'cases':>5} {'rate':>5} {'icc':4} {'metric':14} " + " ".join(f"{m:>22}" for m in intervals.METHODS))
    for r in rows:
        print(f"{r['cases']:>5} {r['rate']:>5} {r['icc']:4} {r['metric']:14} "
              + " ".join(f"{r[m]['coverage']:>8.3f} ±{r[m]['mc_error']:.3f} w{r[m]['mean_width']:.3f}" for m in intervals.METHODS))


if __name__ == "__main__":
    main()
