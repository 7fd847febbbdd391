"""The robustness evidence every HindsightBench row ships with (hindsightbench.md §5.2, §7, §9;
HINDSIGHTBENCH_SPEC.md "Robustness"), computed from the same intermediate tables as the row and
with the row's own estimator (ingest/stats/hb_audit.py: gap, paired_ci, delta_sample, delta_fit):

- window_perturbation: E2 and E3 under other crisis/calm windows (leave one event block out, other
  calm years, a balanced calm set, the drop-one-crisis-date jackknife); CIs where the release
  computes them, each perturbation on a fresh generator as the row's (E2 first, E3 continues).
- lap_sensitivity: the effective cutoff at each theta for every LAP series a model has (the
  protocol's, re-probes at other temperatures, more samples), its displacement against the
  reference cell, delta per series, and the rep jackknife of the reference series.
- transcript_audit: what the W and M replies say (years, events, "Month YYYY", and in W the
  asserted fake year, the true year and anachronisms), with the patterns from a seed.
- serving_verdict: the BM-2a serving-stability rule for two configurations of one model.

Each function returns one frame for many models; the dbt models call them for the models whose
inputs changed (input_fingerprint), so appending a model computes only its rows.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
import statistics

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ingest.stats.hb_audit import AuditParams, delta_fit, delta_sample, draws_for, gap, paired_ci, r_signals, sample_at, window_table

ENDPOINTS = {"E2": ("D", "M"), "E3": ("W_fake", "W")}


def fingerprint(frame: pd.DataFrame, *extra) -> str:
    """A digest of a model's input rows (order-free) and the parameters its rows depend on."""
    rows = pd.util.hash_pandas_object(frame.reset_index(drop=True), index=False) if len(frame) else pd.Series([], dtype="uint64")
    digest = hashlib.sha256(str(sorted(int(v) for v in rows)).encode())
    digest.update(repr(extra).encode())
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------- window perturbation

def balanced_calm(calm: list[str], crisis: list[str]) -> list[str]:
    """Crisis dates in chronological order each claim the nearest unused calm date (days; a tie goes
    to the earlier calm date): a calm set as large as the crisis set, without a seed."""
    day = {d: dt.date.fromisoformat(d).toordinal() for d in calm + crisis}
    used: list[str] = []
    for c in sorted(crisis):
        free = [(abs(day[q] - day[c]), q) for q in calm if q not in used]
        if not free:            # a panel with fewer calm than crisis dates: the set stops short
            break
        used.append(min(free)[1])
    return used


def perturbations(dates: pd.DataFrame, specs: pd.DataFrame, events: pd.DataFrame) -> list[dict]:
    """The perturbations in seed order, each with its crisis and calm lists (jackknife: one per crisis
    date, in the crisis list's order). dates = int_hb_dates; specs = seed hb_window_perturbations;
    events = seed hb_crisis_events."""
    crisis = list(dates[dates["date_window"] == "crisis"].sort_values("window_position")["decision_date"])
    calm = list(dates[dates["date_window"] == "calm"].sort_values("window_position")["decision_date"])
    pre = sorted(dates.loc[dates["period"] == "pre", "decision_date"])
    strays = sorted((set(events["decision_date"]) & set(pre)) - set(crisis))     # a panel may lack crisis dates
    if strays:
        raise ValueError(f"seed hb_crisis_events: {', '.join(strays)} are not crisis dates of seed hb_date_windows")
    out = []
    for spec in specs.sort_values("position").itertuples(index=False):
        base = {"family": spec.family, "with_ci": bool(spec.with_ci)}
        if spec.family == "none":
            out.append({**base, "perturbation": spec.perturbation, "crisis": crisis, "calm": calm})
        elif spec.family == "drop_event":
            block = set(events.loc[events["event"] == spec.event, "decision_date"])
            out.append({**base, "perturbation": spec.perturbation, "crisis": [d for d in crisis if d not in block], "calm": calm})
        elif spec.family == "calm_years":
            years = set(str(spec.calm_years).split())
            out.append({**base, "perturbation": spec.perturbation, "crisis": crisis, "calm": [d for d in pre if d[:4] in years]})
        elif spec.family == "balanced":
            out.append({**base, "perturbation": spec.perturbation, "crisis": crisis, "calm": balanced_calm(calm, crisis)})
        elif spec.family == "jackknife":
            out += [{**base, "perturbation": f"{spec.perturbation}_{c}", "crisis": [d for d in crisis if d != c], "calm": calm}
                    for c in crisis]
        else:
            raise ValueError(f"seed hb_window_perturbations: unknown family {spec.family!r} for {spec.perturbation!r}")
    return out


def _missing(mine: pd.DataFrame, arms, crisis: list[str], calm: list[str]) -> str | None:
    """Why an endpoint cannot be computed on these windows: one is empty (a panel without those dates),
    or an arm has no sketch on one of their dates."""
    if not crisis or not calm:
        return f"a window is empty on this panel ({len(crisis)} crisis, {len(calm)} calm dates)"
    window_dates = crisis + calm
    for arm in arms:
        have = set(mine.loc[(mine["arm"] == arm) & (mine["n_sketches"] > 0), "decision_date"])
        lacking = sorted(set(window_dates) - have)
        if lacking:
            name = "W by fake date" if arm == "W_fake" else arm
            return (f"{len(lacking)} of the perturbation's {len(set(window_dates))} dates have no {name} sketch "
                    f"(a reduced tier's re-partition leaves empty cells), e.g. {lacking[0]}")
    return None


def window_perturbation(counts: pd.DataFrame, dates: pd.DataFrame, specs: pd.DataFrame, events: pd.DataFrame,
                        params: AuditParams) -> pd.DataFrame:
    """One row per model x perturbation x endpoint (counts = int_hb_sketch_counts)."""
    plans = perturbations(dates, specs, events)
    rows = []
    for model_key, mine in counts.groupby("model_key", sort=True):
        frozen = {}
        for position, plan in enumerate(plans, start=1):
            table, crisis, calm = window_table(mine, plan["crisis"], plan["calm"])
            stream = "e2" if plan["family"] == "none" else f"e2:{plan['perturbation']}"
            rng = draws_for(params, model_key, stream) if plan["with_ci"] else None
            for endpoint, (a, b) in ENDPOINTS.items():
                row = {"model_key": model_key, "perturbation": plan["perturbation"], "family": plan["family"],
                       "position": position, "endpoint": endpoint, "n_crisis": len(plan["crisis"]), "n_calm": len(plan["calm"])}
                reason = _missing(mine, (a, b), plan["crisis"], plan["calm"])
                if reason:
                    rows.append({**row, "excluded_reason": reason})
                    continue
                gap_a, gap_b = gap(*table[a], crisis, calm), gap(*table[b], crisis, calm)
                row.update(estimate=float(gap_a - gap_b), gap_a=float(gap_a), gap_b=float(gap_b))
                if rng is not None:
                    row["ci_low"], row["ci_high"], row["finite_replicates"] = paired_ci(
                        rng, table, a, b, crisis, calm, params.replicates, params.min_finite)
                    if row["ci_low"] is not None:
                        row["ci_excludes_zero"] = bool(row["ci_low"] > 0 or row["ci_high"] < 0)
                if plan["family"] == "none":
                    frozen[endpoint] = row["estimate"]
                if endpoint in frozen and np.isfinite(row["estimate"]) and np.isfinite(frozen[endpoint]):
                    row["sign_held"] = bool(np.sign(row["estimate"]) == np.sign(frozen[endpoint]))
                rows.append(row)
    columns = {"model_key": "string", "perturbation": "string", "family": "string", "position": "Int32",
               "endpoint": "string", "estimate": "float64", "gap_a": "float64", "gap_b": "float64",
               "ci_low": "float64", "ci_high": "float64", "finite_replicates": "Int32", "n_crisis": "Int32",
               "n_calm": "Int32", "sign_held": "boolean", "ci_excludes_zero": "boolean", "excluded_reason": "string"}
    return pd.DataFrame(rows, columns=list(columns)).astype(columns)


# ---------------------------------------------------------------- LAP sensitivity

def month_index(month: str) -> int:
    return int(month[:4]) * 12 + int(month[5:7])


def month_of(index: int) -> str:
    year, month = divmod(index - 1, 12)
    return f"{year}-{month + 1:02d}"


class RepCounts:
    """One LAP series' lines and up/down answers as a date x rep-id matrix, so LAP over any subset of
    rep ids is two column sums (all lines of a chosen rep count, duplicates pooled)."""

    def __init__(self, per_rep: pd.DataFrame):
        table = per_rep.pivot_table(index="decision_date", columns="rep", values=["n_lines", "n_updown"],
                                    aggfunc="sum", fill_value=0).sort_index()
        self.dates = table.index
        self.reps = [int(r) for r in table["n_lines"].columns]
        self.lines, self.updown = table["n_lines"].to_numpy(float), table["n_updown"].to_numpy(float)

    def sums(self, reps=None) -> tuple[np.ndarray, np.ndarray]:
        """Lines and up/down answers per date over the chosen rep ids (all of them by default)."""
        columns = slice(None) if reps is None else [i for i, r in enumerate(self.reps) if r in reps]
        return self.lines[:, columns].sum(axis=1), self.updown[:, columns].sum(axis=1)

    def lap(self, reps=None) -> pd.Series:
        """LAP_d by date over the chosen rep ids (all of them by default); dates without a line drop out."""
        lines, updown = self.sums(reps)
        keep = lines > 0
        return pd.Series(updown[keep] / lines[keep], index=self.dates[keep])


def cutoff(lap: pd.Series, theta: float) -> str | None:
    """The effective cutoff: the last probed month with LAP > theta."""
    above = lap.index[lap.to_numpy() > theta]
    return str(above[-1])[:7] if len(above) else None


def delta_status(fit: dict, significance_t: float) -> str:
    if fit.get("delta") is None:
        return "-"
    if abs(fit["delta_t"]) >= significance_t:
        return "sig+" if fit["delta"] > 0 else "sig-"
    return "ns"


def jackknife_seed(model_key: str) -> int:
    """The release's seed of a model's rep jackknife: the first 8 bytes of sha256(model dir name)."""
    return int.from_bytes(hashlib.sha256(model_key.encode()).digest()[:8], "big")


def lap_series(rep_counts: pd.DataFrame, protocol_temperature: float) -> dict[tuple[float, int], pd.DataFrame]:
    """A model's LAP series, keyed (temperature, samples): the protocol's probes; re-probes at the
    protocol temperature pooled with them (more samples); re-probes at another temperature alone."""
    protocol = rep_counts[rep_counts["probe_set"] == "protocol"]
    series = {}
    if len(protocol):
        series[(protocol_temperature, protocol["rep"].nunique())] = protocol
    for temperature, extra in rep_counts[rep_counts["probe_set"] != "protocol"].groupby("temperature", sort=True):
        pooled = pd.concat([protocol, extra]) if np.isclose(temperature, protocol_temperature) else extra
        series[(float(temperature), pooled["rep"].nunique())] = pooled
    return series


def lap_sensitivity(rep_counts: pd.DataFrame, counts: pd.DataFrame, dates: pd.DataFrame, params: AuditParams, *,
                    thetas: list[float], reference_theta: float, protocol_temperature: float, subsets: int,
                    significance_t: float) -> pd.DataFrame:
    """One row per model x LAP series x theta (rep_counts = int_hb_lap_rep_counts; counts =
    int_hb_sketch_counts for the R signal of delta)."""
    pre = sorted(dates.loc[dates["period"] == "pre", "decision_date"])
    realized = dict(zip(dates["decision_date"], dates["realized_direction"]))
    rows = []
    for model_key, mine in rep_counts.groupby("model_key", sort=True):
        signals = r_signals(counts[counts["model_key"] == model_key], pre, realized)
        all_series = lap_series(mine, protocol_temperature)
        protocol = [key for key, part in all_series.items() if (part["probe_set"] == "protocol").all()]
        reference = protocol[0] if protocol else None
        matrices = {key: RepCounts(part) for key, part in all_series.items()}
        reference_cut = cutoff(matrices[reference].lap(), reference_theta) if reference else None
        jackknife = {}
        if reference:
            per = matrices[reference]
            rep_ids = sorted(per.reps)
            k = len(rep_ids) // 2
            seed = jackknife_seed(model_key)
            rng = np.random.default_rng(seed)
            baseline = delta_status(delta_fit(delta_sample(signals, per.lap()), params), significance_t)
            cuts, deltas, statuses = [], [], []
            position = per.dates.get_indexer(signals.index)     # the signals' dates among the series'
            for _ in range(subsets):
                # what per.lap(subset), cutoff and delta_sample give, on arrays (200 subsets a model)
                lines, updown = per.sums(set(rng.choice(rep_ids, size=k, replace=False).tolist()))
                probed = lines > 0
                lap = np.zeros(len(lines))
                lap[probed] = updown[probed] / lines[probed]
                above = np.flatnonzero(probed & (lap > reference_theta))
                cuts.append(str(per.dates[above[-1]])[:7] if len(above) else None)
                fit = delta_fit(sample_at(signals, position, lap, probed), params)
                deltas.append(fit.get("delta"))
                statuses.append(delta_status(fit, significance_t))
            months = [month_index(c) for c in cuts if c is not None]
            defined = [d for d in deltas if d is not None]
            jackknife = {
                "jk_k_of_n": f"{k}-of-{len(rep_ids)}", "jk_seed": str(seed), "jk_subsets": subsets,
                "jk_cutoff_min": month_of(min(months)) if months else None,
                "jk_cutoff_median": month_of(statistics.median_low(months)) if months else None,
                "jk_cutoff_max": month_of(max(months)) if months else None,
                "jk_cutoff_none": sum(c is None for c in cuts),
                "jk_agree_pct": 100.0 * sum(c == reference_cut for c in cuts) / subsets,
                "jk_delta_defined_pct": 100.0 * len(defined) / subsets,
                "jk_delta_median": float(np.median(defined)) if defined else None,
                "jk_status_change_pct": 100.0 * sum(s != baseline for s in statuses) / subsets,
            }
        for (temperature, samples), per in all_series.items():
            lap = matrices[(temperature, samples)].lap()
            fit = delta_fit(delta_sample(signals, lap), params)
            is_reference = (temperature, samples) == reference
            for theta in thetas:
                cut = cutoff(lap, theta)
                rows.append({
                    "model_key": model_key, "temperature": temperature, "samples": samples,
                    "probe_lines": int(per["n_lines"].sum()), "probe_dates": len(lap), "theta": theta,
                    "cutoff_month": cut, "is_reference_series": is_reference,
                    "is_reference_cell": is_reference and bool(np.isclose(theta, reference_theta)),
                    "displacement_months": (month_index(cut) - month_index(reference_cut)
                                            if cut is not None and reference_cut is not None else None),
                    "delta": fit.get("delta"), "delta_t": fit.get("delta_t"), "delta_n": fit["delta_n"],
                    "delta_gate": fit.get("delta_gate"), "delta_status": delta_status(fit, significance_t),
                    **(jackknife if is_reference else {}),
                })
    columns = {"model_key": "string", "temperature": "float64", "samples": "Int32", "probe_lines": "Int64",
               "probe_dates": "Int32", "theta": "float64", "cutoff_month": "string", "is_reference_series": "boolean",
               "is_reference_cell": "boolean", "displacement_months": "Int32", "delta": "float64", "delta_t": "float64",
               "delta_n": "Int32", "delta_gate": "string", "delta_status": "string", "jk_k_of_n": "string",
               "jk_seed": "string", "jk_subsets": "Int32", "jk_cutoff_min": "string", "jk_cutoff_median": "string",
               "jk_cutoff_max": "string", "jk_cutoff_none": "Int32", "jk_agree_pct": "float64",
               "jk_delta_defined_pct": "float64", "jk_delta_median": "float64", "jk_status_change_pct": "float64"}
    return pd.DataFrame(rows, columns=list(columns)).astype(columns)


# ---------------------------------------------------------------- transcript audit

# Where RE2 (pyarrow's vectorised regex) and Python's re can part on a text or a pattern: a text
# outside ASCII or with a space RE2's \s lacks (\v, \x1c-\x1f), a pattern outside ASCII or with `$`
# (Python's also matches before a final newline), `{,n}` or `\Z`. There, and for a pattern RE2
# refuses, the audit runs Python's re: the counts are re's, to the reply.
_RE2_UNSAFE_TEXT = re.compile(r"[\v\x1c-\x1f]")
_RE2_UNSAFE_PATTERN = re.compile(r"\$|\{,|\\Z")


class Lexicon:
    """The transcript audit's patterns (seed hb_transcript_patterns: pattern_set, pattern, ignore_case):
    a set hits a text when any of its patterns does."""

    def __init__(self, patterns: pd.DataFrame):
        self.sets = {}
        for name, part in patterns.groupby("pattern_set", sort=False):
            self.sets[name] = [re.compile(p, re.I if bool(ignore) else 0) for p, ignore in zip(part["pattern"], part["ignore_case"])]
        for required in ("year", "event7", "event18", "monthyear", "year_token", "unit_echo"):
            if required not in self.sets:
                raise ValueError(f"seed hb_transcript_patterns has no pattern_set {required!r}")

    def hit(self, name: str, text: str) -> bool:
        return any(rx.search(text) for rx in self.sets[name])

    def hits(self, name: str, texts: list[str]) -> np.ndarray:
        """hit(name, text) for each of TEXTS, as one vectorised RE2 pass per pattern where RE2 reads
        the text and the pattern as re does, and re elsewhere."""
        plain = np.array([t.isascii() and not _RE2_UNSAFE_TEXT.search(t) for t in texts], dtype=bool)
        found = np.zeros(len(texts), dtype=bool)
        batch = pa.array([t for t, p in zip(texts, plain) if p], type=pa.large_string())
        for rx in self.sets[name]:
            matched = _re2_search(rx, batch)
            if matched is None:
                plain[:] = False
                break
            found[plain] |= matched
        for i in np.flatnonzero(~plain):
            found[i] = self.hit(name, texts[i])
        return found

    def anachronism(self, text: str, fake_year: int) -> bool:
        """A year token strictly after the asserted fake year, outside unit and snapshot-value echoes."""
        spans = [m.span() for rx in self.sets["unit_echo"] for m in rx.finditer(text)]
        for rx in self.sets["year_token"]:
            for m in rx.finditer(text):
                if int(m.group(1)) > fake_year and not any(a <= m.start() and m.end() <= b for a, b in spans):
                    return True
        return False


def _re2_search(rx: re.Pattern, texts: pa.Array) -> np.ndarray | None:
    """Whether RX finds a match in each of TEXTS (plain ASCII) through RE2, or None where RE2 could
    read RX otherwise than re does, or cannot read it."""
    if not rx.pattern.isascii() or _RE2_UNSAFE_PATTERN.search(rx.pattern) or rx.flags & ~(re.I | re.U):
        return None
    try:
        matched = pc.match_substring_regex(texts, rx.pattern, ignore_case=bool(rx.flags & re.I))
    except pa.ArrowInvalid:
        return None
    return matched.to_numpy(zero_copy_only=False).astype(bool)


def reply_flags(replies: pd.DataFrame, nodes: pd.DataFrame, lexicon: Lexicon) -> pd.DataFrame:
    """The transcript audit's flags of each reply (replies: arm, decision_date, reply_text; nodes:
    decision_date, fake_date), in its order: whether it mentions a year, an event of each lexicon and
    a "Month YYYY"; for a W reply whose node has a transplant date, the asserted fake year, the true
    year (NA where the two years are one) and an anachronism (NA elsewhere)."""
    fake = dict(zip(nodes["decision_date"], nodes["fake_date"]))
    texts = replies["reply_text"].fillna("").tolist()
    flags = {name: lexicon.hits(name, texts) for name in ("year", "event7", "event18", "monthyear")}
    out = pd.DataFrame(flags, index=replies.index).astype("boolean")
    audited = {"fake_year": [pd.NA] * len(texts), "true_year": [pd.NA] * len(texts), "anachronism": [pd.NA] * len(texts)}
    # no year token at all, no anachronism: the token-by-token check reads the others only
    has_year = lexicon.hits("year_token", texts)
    for i, (arm, date, text) in enumerate(zip(replies["arm"], replies["decision_date"], texts)):
        fake_date = fake.get(date)
        if arm != "W" or not isinstance(fake_date, str):
            continue
        fake_year, true_year = int(fake_date[:4]), int(date[:4])
        audited["fake_year"][i] = _has_year(text, fake_year)
        if true_year != fake_year:
            audited["true_year"][i] = _has_year(text, true_year)
        audited["anachronism"][i] = bool(has_year[i]) and lexicon.anachronism(text, fake_year)
    for name, values in audited.items():
        out[name] = pd.array(values, dtype="boolean")
    return out


def transcript_audit(replies: pd.DataFrame, nodes: pd.DataFrame, lexicon: Lexicon) -> pd.DataFrame:
    """One row per model x arm (W, M): replies with a hit of each pattern set, and for W the asserted
    fake year (over replies whose node has a transplant date), the true year (over those whose true
    year differs) and anachronisms (reply_flags, summed). replies: model_key, arm, decision_date,
    replicate, reply_text."""
    rows = []
    for (model_key, arm), part in replies.groupby(["model_key", "arm"], sort=True):
        row = {"model_key": model_key, "arm": arm, "n_files": len(part), "n_dates": part["decision_date"].nunique(),
               "n_replicates": part["replicate"].nunique()}
        flags = reply_flags(part, nodes, lexicon)
        for name in ("year", "event7", "event18", "monthyear"):
            row[f"{name}_hits"] = int(flags[name].sum())
        if arm == "W":
            for name in ("fake_year", "true_year"):
                row[f"{name}_hits"], row[f"{name}_files"] = int(flags[name].sum()), int(flags[name].notna().sum())
            row["anachronism_hits"] = int(flags["anachronism"].sum())
        rows.append(row)
    columns = {"model_key": "string", "arm": "string", "n_files": "Int32", "n_dates": "Int32", "n_replicates": "Int32",
               "year_hits": "Int32", "event7_hits": "Int32", "event18_hits": "Int32", "monthyear_hits": "Int32",
               "fake_year_hits": "Int32", "fake_year_files": "Int32", "true_year_hits": "Int32",
               "true_year_files": "Int32", "anachronism_hits": "Int32"}
    return pd.DataFrame(rows, columns=list(columns)).astype(columns)


def _has_year(text: str, year: int) -> bool:
    """YEAR as a word of TEXT (the substring test first: most replies lack it, and it is cheap)."""
    return str(year) in text and bool(re.search(rf"\b{year}\b", text))


# ---------------------------------------------------------------- serving stability

def serving_verdict(a: tuple, b: tuple, underpowered_width: float) -> tuple[str, str]:
    """The BM-2a serving-stability rule for two configurations of one model, each (estimate, ci_low,
    ci_high) as fractions: UNSTABLE when the CIs are disjoint or either point lies outside the other's
    CI; UNDERPOWERED when a CI is missing, or spans zero wider than `underpowered_width`, or the
    points differ by at least half the mean CI width; else STABLE."""
    (est_a, lo_a, hi_a), (est_b, lo_b, hi_b) = a, b
    if any(v is None or not np.isfinite(v) for v in (est_a, lo_a, hi_a, est_b, lo_b, hi_b)):
        return "UNDERPOWERED", "bootstrap CI not identified (fewer finite replicates than the minimum, or none computed)"
    if hi_a < lo_b or hi_b < lo_a:
        return "UNSTABLE", "95% CIs are disjoint"
    if not (lo_b <= est_a <= hi_b and lo_a <= est_b <= hi_a):
        return ("UNSTABLE", "mutual point-in-CI containment fails (BM2a prereg rule): "
                            "a point estimate lies outside the other config's CI")
    width_a, width_b = hi_a - lo_a, hi_b - lo_b
    if (lo_a < 0 < hi_a and width_a > underpowered_width) or (lo_b < 0 < hi_b and width_b > underpowered_width):
        return "UNDERPOWERED", f"a CI spans zero with width > {underpowered_width * 100:.0f}pp"
    half_pooled, difference = (width_a + width_b) / 4, abs(est_a - est_b)
    if difference < half_pooled:
        return ("STABLE", f"CIs overlap, containment holds, |Delta| {difference * 100:.1f}pp "
                          f"< half pooled CI width {half_pooled * 100:.1f}pp")
    return ("UNDERPOWERED", f"containment holds but |Delta| {difference * 100:.1f}pp >= half pooled "
                            f"CI width {half_pooled * 100:.1f}pp — add reps")


# ---------------------------------------------------------------- incremental by model

def models_to_compute(dbt, session, fingerprints: dict[str, str]) -> set[str]:
    """The models whose robustness rows must be (re)computed: all on a first or full-refresh build;
    in an incremental one, those new or whose input_fingerprint changed (the others keep their rows)."""
    if not dbt.is_incremental:
        return set(fingerprints)
    stored = dict(session.execute(f"select distinct model_key, input_fingerprint from {dbt.this}").fetchall())
    return {key for key, value in fingerprints.items() if stored.get(key) != value}


def changed_models_rows(dbt, session, relation, *extra, columns: list[str] | None = None
                        ) -> tuple[pd.DataFrame, dict[str, str]]:
    """What a DuckDB model incremental by model reads of a large input (the replies' texts): each
    model's input_fingerprint, digested in SQL from its rows of RELATION (their count and the sum of
    their hashes: order-free; only COLUMNS, the ones the step reads, when given) and the shared inputs
    EXTRA; then those rows of only the models to compute (models_to_compute). An append then reads
    one model's texts, however many are audited."""
    if columns:
        relation = relation.select(", ".join(f'"{c}"' for c in columns))
    digests = relation.query("input_rows", "select model_key, count(*), sum(hash(input_rows)) from input_rows "
                                           "group by model_key").fetchall()
    fingerprints = {key: hashlib.sha256(f"{count}:{total}:{extra!r}".encode()).hexdigest()[:16]
                    for key, count, total in digests}
    todo = sorted(models_to_compute(dbt, session, fingerprints))
    keys = ", ".join("'" + key.replace("'", "''") + "'" for key in todo)
    return relation.filter(f"model_key in ({keys})" if todo else "false").df(), fingerprints


def per_model_fingerprints(frame: pd.DataFrame, keys, *extra) -> dict[str, str]:
    """input_fingerprint of every model in `keys`: its rows of `frame` and the shared inputs `extra`."""
    groups = dict(tuple(frame.groupby("model_key", sort=False))) if len(frame) else {}
    return {key: fingerprint(groups.get(key, frame.iloc[0:0]), *extra) for key in keys}
