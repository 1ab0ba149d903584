"""E6's analysis: recovery-rate tables, the frontier, verdicts C9, C10, X1 — pure functions of stored rows.

A run *recovers* r* when ``r_hat == r*`` (the predictor's noise-calibrated cut); its exact-recovery
rate is the fraction of seeds (and spectra, where pooled) that do. A run outside its method's domain
should say ``identifiable = False``; ``confident_wrong`` marks runs that claim identifiability and miss.

Domains (theory, used by the verdicts, not read from the predictor's own flags):

- ``linear_v_known``: every r* (K solved by least squares once ``N n d_v > d²``).
- ``linear_v_unknown``: every r* when ``n > d``; r* < d when ``n = d``; r* < min(n, d_v) when ``n < d``
  (``rank Y_i = min(r*, n, d_v)`` then, so larger r* are only bounded below).
- ``softmax_log_attention``: V known and ``n ≤ min(d, d_v)`` (the attention is recoverable per sample).
- ``softmax_linearised``: none (biased by the softmax's curvature; C10 measures how).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...predict.result import ESTIMATE_KEYS
from ..base import Analysis, Verdict, decide
from ..claim_slices import grid_setting, sliced_boundary, with_option
from .plots import plot_estimates, plot_rate_heatmaps

CELL = ["teacher", "method", "v", "task.n", "task.spectrum", "task.r_star", "n_samples", "task.sigma"]
PAPER_ESTIMATORS = ("numerical_rank", "energy_effective_rank", "realised_mixer_energy_rank")
ESTIMATORS = (*ESTIMATE_KEYS, "mean_mixer_energy_rank")

#: Column holding the estimator's value on the ground truth (default ``true_<key>``: on K*'s spectrum).
TRUE_COLUMN = {
    "noise_calibrated_rank": "task.r_star",
    "realised_mixer_energy_rank": "teacher_mixer_energy_rank",
    "mean_mixer_energy_rank": "teacher_meanmixer_energy_rank",
}


def in_domain(method: str, v: str, n: int, d: int, d_v: int, r_star: int) -> bool:
    """Whether ``method`` can identify ``r_star`` in this setting in principle (module docstring)."""
    if method == "linear_v_known":
        return v == "known"
    if method == "linear_v_unknown":
        return True if n > d else (r_star < d if n == d else r_star < min(n, d_v))
    if method == "softmax_log_attention":
        return v == "known" and n <= min(d, d_v)
    return False


def with_domain(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` plus a boolean ``in_domain`` column."""
    out = table.copy()
    out["in_domain"] = [
        in_domain(
            r["method"], r["v"], int(r["task.n"]), int(r["task.d"]), int(r["task.d_v"]), int(r["task.r_star"])
        )
        for _, r in out.iterrows()
    ]
    return out


def rate_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell (spectra separate): exact-recovery rate, flagged and confident-wrong rates, mean r_hat."""
    g = table.groupby(CELL, sort=True)
    out = g.agg(
        rate=("exact", "mean"),
        flagged=("identifiable", lambda s: float((1 - s).mean())),
        confident_wrong=("confident_wrong", "mean"),
        mean_r_hat=("r_hat", "mean"),
        median_cpu_s=("cpu_s", "median"),
        runs=("exact", "size"),
    )
    return out.reset_index()


def estimate_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell and estimator: mean estimate, the estimator on K* (``true``) and the rate of round(estimate) == r*."""
    rows = []
    for key in ESTIMATORS:
        col = f"est_{key}"
        if col not in table:
            continue
        have = table[table[col].notna()]
        for cell, g in have.groupby(CELL, sort=True):
            ref = TRUE_COLUMN.get(key, f"true_{key}")
            true = g[ref].mean() if ref in g else np.nan
            rows.append(
                {
                    **dict(zip(CELL, cell)),
                    "estimator": key,
                    "mean_estimate": float(g[col].mean()),
                    "true_value": float(true),
                    "exact_rate": float((np.floor(g[col] + 0.5) == g["task.r_star"]).mean()),
                    "runs": int(len(g)),
                }
            )
    return pd.DataFrame(rows)


def pool_spectra(rates: pd.DataFrame) -> pd.DataFrame:
    """``rates`` with the spectra pooled (run-weighted mean rate per remaining cell)."""
    keys = [c for c in CELL if c != "task.spectrum"]
    g = rates.assign(hits=rates["rate"] * rates["runs"]).groupby(keys, sort=True)[["hits", "runs"]].sum()
    return g.assign(rate=g["hits"] / g["runs"]).drop(columns="hits").reset_index()


def frontier_table(rates: pd.DataFrame, sigma_ref: float, level: float) -> pd.DataFrame:
    """Per (teacher, method, v, n, r*): smallest N with rate >= level at ``sigma_ref``, largest σ with
    rate >= level at the largest N (spectra pooled); NaN when none reaches it."""
    pooled = pool_spectra(rates)
    rows = []
    for key, g in pooled.groupby(["teacher", "method", "v", "task.n", "task.r_star"]):
        at_ref = g[np.isclose(g["task.sigma"], sigma_ref) & (g["rate"] >= level)]
        at_max = g[(g["n_samples"] == g["n_samples"].max()) & (g["rate"] >= level)]
        rows.append(
            {
                **dict(zip(["teacher", "method", "v", "task.n", "task.r_star"], key)),
                "min_N_exact": float(at_ref["n_samples"].min()) if len(at_ref) else np.nan,
                "max_sigma_exact": float(at_max["task.sigma"].max()) if len(at_max) else np.nan,
                "N_max": int(g["n_samples"].max()),
            }
        )
    return pd.DataFrame(rows)


def _rates_by_r(g: pd.DataFrame, col: str = "exact") -> dict[int, float]:
    return {int(r): float(h[col].mean()) for r, h in g.groupby("task.r_star")}


def _at_scale(table: pd.DataFrame, sigma_max: float) -> pd.DataFrame:
    """Runs at the largest N with σ <= sigma_max (where 'sufficient scale' is judged)."""
    if not len(table):
        return table
    return table[
        (table["n_samples"] == table["n_samples"].max()) & (table["task.sigma"] <= sigma_max + 1e-12)
    ]


def verdict_c9(cfg, table: pd.DataFrame) -> Verdict:
    criterion = (
        f"linear teacher, both linear methods (V known: linear_v_known; V unknown: linear_v_unknown): at the largest N "
        f"and every sigma <= {cfg.verdict.sigma_max:g}, the exact-recovery rate (r_hat == r*) is >= {cfg.verdict.rate:g} for every r* in "
        f"the method's domain (spectra, seeds pooled); r* outside it (V unknown, n < d: r* >= min(n, d_v)) are flagged "
        f"not identifiable in >= {cfg.verdict.flag_rate:g} of runs"
    )
    statement = (
        "r* of a linear QK teacher is predicted exactly from data at sufficient N, with V known and unknown"
    )
    lin = table[(table["teacher"] == "linear") & table["method"].isin(["linear_v_known", "linear_v_unknown"])]
    evidence, checks = {}, []
    for method in ("linear_v_known", "linear_v_unknown"):
        for n, g in _at_scale(lin[lin["method"] == method], cfg.verdict.sigma_max).groupby("task.n"):
            inside, outside = g[g["in_domain"]], g[~g["in_domain"]]
            rates = _rates_by_r(inside)
            flagged = float((outside["identifiable"] == 0).mean()) if len(outside) else None
            ok = (
                bool(rates)
                and min(rates.values()) >= cfg.verdict.rate
                and (flagged is None or flagged >= cfg.verdict.flag_rate)
            )
            checks.append(ok)
            evidence[f"{method}/n={int(n)}"] = {
                "N": int(g["n_samples"].max()),
                "rate_by_r_star": rates,
                "ok": ok,
                "out_of_domain_r_stars": sorted(int(r) for r in outside["task.r_star"].unique()),
                "out_of_domain_flagged": flagged,
                "out_of_domain_rate": float(outside["exact"].mean()) if len(outside) else None,
                "confident_wrong_in_domain": float(inside["confident_wrong"].mean()) if len(inside) else None,
            }
    methods = {k.split("/")[0] for k in evidence}
    rates_in = [min(e["rate_by_r_star"].values()) for e in evidence.values() if e["rate_by_r_star"]]
    evidence["min_rate_in_domain"] = min(rates_in) if rates_in else None
    if methods != {"linear_v_known", "linear_v_unknown"}:
        evidence["missing"] = sorted({"linear_v_known", "linear_v_unknown"} - methods)
        return Verdict("C9", "inconclusive", criterion, evidence, "E6", statement)
    return Verdict("C9", decide(all(checks)), criterion, evidence, "E6", statement)


def _mean_by_r(g: pd.DataFrame, col: str) -> dict[int, float]:
    return {int(r): float(h[col].mean()) for r, h in g.groupby("task.r_star") if h[col].notna().any()}


#: The paper's names for the estimators C10 is about (the predictor's ``est_<key>`` columns).
PAPER_NAMES = {
    "numerical_rank": "numerical rank (tol 1e-2 of s_1) of the linearised kernel — the paper's estimator",
    "energy_effective_rank": "energy effective rank R̃_eff of the linearised kernel — the paper's estimator",
    "realised_mixer_energy_rank": "realised-mixer energy rank (mean over inputs) — the paper's estimator",
}


def band(value: float | None, threshold: float, tol: float, above: bool) -> bool | None:
    """A one-sided sub-claim: True when ``value`` is on the claimed side of ``threshold``; False when it
    is on the other side by more than ``tol`` (contradicted); None in between or without data."""
    if value is None or not np.isfinite(value):
        return None
    if above:
        return True if value >= threshold else (False if value < threshold - tol else None)
    return True if value <= threshold else (False if value > threshold + tol else None)


def _all_parts(parts: list[bool | None]) -> bool | None:
    """A sub-claim holds when every part holds, is contradicted when any part is, else undecided."""
    if any(p is False for p in parts):
        return False
    return True if parts and all(p is True for p in parts) else None


def c10_numerical(cfg, soft: pd.DataFrame) -> dict:
    """(b) numerical rank saturates: above r* + tol at every r*, and flat (spread <= half the r* span)."""
    tol = cfg.verdict.c10_tolerance
    num = _mean_by_r(soft, "est_numerical_rank") if "est_numerical_rank" in soft else {}
    if len(num) < 2:
        return {"mean_by_r_star": num, "holds": None}
    over = min(v - r for r, v in num.items())
    spread = (max(num.values()) - min(num.values())) / (max(num) - min(num))
    parts = [band(over, tol, tol, above=True), band(spread, 0.5, 0.5, above=False)]
    return {
        "mean_by_r_star": num,
        "min_over_r_star": over,
        "spread_over_r_star_span": spread,
        "holds": _all_parts(parts),
    }


def c10_energy(cfg, soft: pd.DataFrame) -> dict:
    """(c) energy rank over-estimates the smallest r* and compresses the largest (bias against r*)."""
    tol = cfg.verdict.c10_tolerance
    if "est_energy_effective_rank" not in soft:
        return {"holds": None}
    bias = _mean_by_r(soft.assign(b=soft["est_energy_effective_rank"] - soft["task.r_star"]), "b")
    if len(bias) < 2:
        return {"bias_vs_r_star": bias, "holds": None}
    small, large = bias[min(bias)], bias[max(bias)]
    parts = [band(small, tol, tol, above=True), band(large, -tol, tol, above=False)]
    if abs(small) <= tol and abs(large) <= tol:
        parts.append(False)  # unbiased at both ends: the opposite of the claim
    out = {"bias_vs_r_star": bias, "bias_smallest_r_star": small, "bias_largest_r_star": large}
    if "true_energy_effective_rank" in soft:
        b = soft["est_energy_effective_rank"] - soft["true_energy_effective_rank"]
        out["bias_vs_energy_rank_of_K_star"] = _mean_by_r(soft.assign(b=b), "b")
    return {**out, "holds": _all_parts(parts)}


def _last_step(g: pd.DataFrame) -> tuple[float | None, dict]:
    col = "est_realised_mixer_energy_rank"
    m = _mean_by_r(g, col) if col in g else {}
    if len(m) < 2:
        return None, m
    top, second = sorted(m)[-1], sorted(m)[-2]
    return m[top] - m[second], m


def c10_mixer(cfg, soft: pd.DataFrame, lin: pd.DataFrame) -> dict:
    """(d) realised-mixer energy rank rises between the two largest r* (softmax: informative) and
    does not for the linear teacher (saturated)."""
    tol = cfg.verdict.c10_tolerance
    step_soft, m_soft = _last_step(soft)
    step_lin, m_lin = _last_step(lin)
    parts = [band(step_soft, tol, tol, above=True), band(step_lin, tol, tol, above=False)]
    return {
        "softmax_mean_by_r_star": m_soft,
        "linear_mean_by_r_star": m_lin,
        "softmax_last_step": step_soft,
        "linear_last_step": step_lin,
        "holds": _all_parts(parts) if step_soft is not None and step_lin is not None else None,
    }


def c10_checks(cfg, soft: pd.DataFrame, lin: pd.DataFrame) -> dict:
    """The sub-claims of C10 on softmax_linearised runs (softmax teacher ``soft``, linear ``lin``)."""
    rates = {
        key: _rates_by_r(soft.assign(hit=np.floor(soft[f"est_{key}"] + 0.5) == soft["task.r_star"]), "hit")
        for key in PAPER_ESTIMATORS
        if f"est_{key}" in soft
    }
    rates["noise_calibrated_cut"] = _rates_by_r(soft)
    return {
        "exact_rate_by_r_star": rates,
        "b_numerical_rank_saturates": c10_numerical(cfg, soft),
        "c_energy_rank_over_small_compresses_large": c10_energy(cfg, soft),
        "d_mixer_informative_softmax_saturated_linear": c10_mixer(cfg, soft, lin),
    }


C10_SUBCLAIMS = (
    "b_numerical_rank_saturates",
    "c_energy_rank_over_small_compresses_large",
    "d_mixer_informative_softmax_saturated_linear",
)


def verdict_c10(cfg, table: pd.DataFrame) -> Verdict:
    t = cfg.verdict.c10_tolerance
    criterion = (
        f"softmax_linearised at the largest N, sigma <= {cfg.verdict.sigma_max:g}, V {cfg.verdict.c10_v}; each sub-claim against r*, "
        f"tolerance {t:g} rank units: (b) the paper's numerical rank saturates — mean - r* >= {t:g} at every r* "
        f"(contradicted if < 0) and its spread over r* <= half the r* span (contradicted if > the span); (c) the "
        f"paper's energy effective rank over-estimates the smallest r* (bias >= {t:g}; contradicted if < 0) and "
        f"compresses the largest (bias <= -{t:g}; contradicted if > 0; also contradicted if |bias| <= {t:g} at both); "
        f"(d) the paper's realised-mixer energy rank rises by >= {t:g} between the two largest r* for the softmax "
        f"teacher (contradicted if it falls) and by <= {t:g} for the linear one (contradicted if > {2 * t:g}). "
        "Confirmed iff all hold; refuted iff any is contradicted; else inconclusive"
    )
    statement = "the paper's data-only estimators recover r* of a softmax teacher only partially"
    rows = (
        _at_scale(table[table["method"] == "softmax_linearised"], cfg.verdict.sigma_max)
        if len(table)
        else table
    )
    evidence: dict = {"paper_estimators": PAPER_NAMES}
    for v, g in rows.groupby("v") if len(rows) else ():
        evidence[f"V_{v}"] = c10_checks(cfg, g[g["teacher"] == "softmax"], g[g["teacher"] == "linear"])
    main = evidence.get(f"V_{cfg.verdict.c10_v}")
    if main is None:
        return Verdict("C10", "inconclusive", criterion, evidence, "E6", statement)
    subs = [main[k]["holds"] for k in C10_SUBCLAIMS]
    evidence["sub_claims_holding"] = sum(s is True for s in subs)
    evidence["sub_claims_contradicted"] = sum(s is False for s in subs)
    verdict = (
        "refuted" if False in subs else ("confirmed" if all(s is True for s in subs) else "inconclusive")
    )
    return Verdict("C10", verdict, criterion, evidence, "E6", statement)


def verdict_x1(cfg, table: pd.DataFrame, frontier: pd.DataFrame) -> Verdict:
    criterion = (
        f"softmax teacher, softmax_log_attention: inside its domain (V known, n <= min(d, d_v)) the exact-recovery rate "
        f"at the largest N is >= {cfg.verdict.rate:g} for every r* and every sigma <= {cfg.verdict.sigma_max:g}; outside it (V unknown "
        f"or n > min(d, d_v)) >= {cfg.verdict.flag_rate:g} of runs are flagged not identifiable"
    )
    statement = "a data-only predictor is exact for softmax teachers wherever r* is identifiable"
    soft = table[(table["teacher"] == "softmax") & (table["method"] == "softmax_log_attention")]
    inside, outside = soft[soft["in_domain"]], soft[~soft["in_domain"]]
    scale = _at_scale(inside, cfg.verdict.sigma_max)
    by_sigma = {f"{s:g}": _rates_by_r(g) for s, g in scale.groupby("task.sigma")}
    N_max = int(inside["n_samples"].max()) if len(inside) else None
    all_sigma = inside[inside["n_samples"] == N_max] if len(inside) else inside
    evidence = {
        "N": N_max,
        "rate_by_sigma_and_r_star": by_sigma,
        "rate_by_sigma_at_N_max_all": {
            f"{s:g}": float(g["exact"].mean()) for s, g in all_sigma.groupby("task.sigma")
        },
        "confident_wrong_in_domain_by_sigma": {
            f"{s:g}": float(g["confident_wrong"].mean()) for s, g in inside.groupby("task.sigma")
        },
        "out_of_domain_flagged": {
            f"n={int(n)}/V {v}": float((g["identifiable"] == 0).mean())
            for (n, v), g in outside.groupby(["task.n", "v"])
        },
    }
    f = (
        frontier[(frontier["method"] == "softmax_log_attention") & (frontier["v"] == "known")]
        if len(frontier)
        else frontier
    )
    evidence["frontier"] = {
        f"n={int(r['task.n'])}/r*={int(r['task.r_star'])}": {
            "min_N_exact": r["min_N_exact"],
            "max_sigma_exact": r["max_sigma_exact"],
        }
        for _, r in f.iterrows()
    }
    if not by_sigma:
        return Verdict("X1", "inconclusive", criterion, evidence, "E6", statement)
    evidence["min_rate_inside"] = min(min(r.values()) for r in by_sigma.values())
    exact = all(min(r.values()) >= cfg.verdict.rate for r in by_sigma.values())
    flagged = all(v >= cfg.verdict.flag_rate for v in evidence["out_of_domain_flagged"].values())
    evidence["exact_inside"], evidence["flagged_outside"] = exact, flagged
    return Verdict("X1", decide(exact and flagged), criterion, evidence, "E6", statement)


#: E6 boundary axes: (config key, result column).
AXES = (("ns", "task.n"), ("spectra", "task.spectrum"), ("seed", "seed"))


def _sigma_options(cfg, verdict_fn, table: pd.DataFrame) -> list:
    """The verdict judged at every other noise level of the grid (``sigma_max``)."""
    levels = sorted(set(cfg.task.sigmas) | {cfg.task.sigma_ref})
    return [
        ({"sigma_max": s}, lambda s=s: verdict_fn(with_option(cfg, {"verdict.sigma_max": s}), table))
        for s in levels
        if s != cfg.verdict.sigma_max
    ]


def c9_with_boundary(cfg, table: pd.DataFrame) -> Verdict:
    """C9, decided again per n, spectrum and seed, and at every noise level of the grid."""
    rows = table[table["method"].isin(["linear_v_known", "linear_v_unknown"])]
    default = grid_setting(cfg, "task.ns", "task.spectra", "verdict.sigma_max")
    options = _sigma_options(cfg, verdict_c9, rows)
    return sliced_boundary(lambda r: verdict_c9(cfg, r), rows, default, AXES, "min_rate_in_domain", options)


def c10_with_boundary(cfg, table: pd.DataFrame) -> Verdict:
    """C10, decided again per n, spectrum and seed, and in the other V setting."""
    table = table[table["method"] == "softmax_linearised"]
    options = [
        ({"c10_v": v}, lambda v=v: verdict_c10(with_option(cfg, {"verdict.c10_v": v}), table))
        for v in cfg.v_settings
        if v != cfg.verdict.c10_v
    ]
    default = grid_setting(cfg, "task.ns", "task.spectra", "verdict.c10_v")
    return sliced_boundary(lambda r: verdict_c10(cfg, r), table, default, AXES, "sub_claims_holding", options)


def x1_with_boundary(cfg, table: pd.DataFrame, frontier: pd.DataFrame) -> Verdict:
    """X1, decided again per n (where users work: n = d = d_v), spectrum and seed, and at every noise level."""

    def fn(c, r):
        return verdict_x1(c, r, frontier)

    rows = table[table["method"] == "softmax_log_attention"]
    default = {
        **grid_setting(cfg, "task.spectra", "verdict.sigma_max"),
        "ns": sorted({*cfg.task.ns, *cfg.x1_ns}),
    }
    return sliced_boundary(
        lambda r: fn(cfg, r), rows, default, AXES, "min_rate_inside", _sigma_options(cfg, fn, rows)
    )


def _with_reasons(table: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    reasons = {r["run_id"]: (r.get("curves") or {}).get("reason", "") for r in records}
    return table.assign(reason=table["run_id"].map(reasons).fillna(""))


def analyse_e6(cfg, table: pd.DataFrame, records: list[dict]) -> Analysis:
    ok = table[table["status"] == "ok"] if len(table) else table
    if not len(ok):
        verdicts = [Verdict(c, "inconclusive", "no runs", {}, "E6") for c in ("C9", "C10", "X1")]
        return Analysis(results=table, verdicts=verdicts)
    ok = with_domain(_with_reasons(ok, records))
    rates = rate_table(ok)
    frontier = frontier_table(rates, cfg.task.sigma_ref, cfg.verdict.rate)
    estimates = estimate_table(ok)
    verdicts = [
        c9_with_boundary(cfg, ok),
        c10_with_boundary(cfg, ok),
        x1_with_boundary(cfg, ok, frontier),
    ]
    figures = {
        **plot_rate_heatmaps(rates, cfg.task.sigma_ref),
        "e6_estimates_vs_r_star": plot_estimates(estimates, cfg.task.sigma_ref),
    }
    cpu = ok.groupby("method")["cpu_s"].median()
    sat = ok[ok["teacher"] == "softmax"]["row_entropy_ratio"]
    notes = [
        "No training: r_hat is the predictor's noise-calibrated cut (predict.cut): the number of singular values of "
        "K_hat above 1.5 × the 95% quantile of the top singular value of a simulated null (fresh noise pushed through "
        "the same equations and weights), cross-checked against the largest gap of the spectrum. "
        f"d = {cfg.task.d}, d_v = {cfg.task.d_v}, n = {', '.join(str(n) for n in cfg.task.ns)}, c = {cfg.task.c:g}, "
        f"spectra {', '.join(cfg.task.spectra)} (geometric decay {cfg.task.decay:g}), {cfg.seeds} seed(s) per cell; (N, σ) "
        f"cells: {'full grid' if cfg.full_grid else f'an N sweep at σ = {cfg.task.sigma_ref:g} and a σ sweep at the largest N'}.",
        "Median CPU seconds per prediction: " + ", ".join(f"{m} {v:.3f}" for m, v in cpu.items()) + ".",
        "Runs outside a method's domain are kept (they should answer 'not identifiable'); 'confident_wrong' counts runs "
        "that claim identifiability and miss r*. The reason of every prediction is the 'reason' column of results/E6.csv.",
    ]
    if len(sat) and sat.notna().any():
        notes.append(
            f"Softmax teacher saturation: row entropy / log n = {sat.mean():.2f} (mean over softmax runs)."
        )
    return Analysis(
        results=ok,
        verdicts=verdicts,
        figures=figures,
        tables={"recovery_rates": rates, "frontier": frontier, "estimates": estimates},
        notes=notes,
    )
