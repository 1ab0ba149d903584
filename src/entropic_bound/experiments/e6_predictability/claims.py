"""E6's claims C8, C9, C10 and X1: each criterion, its report sentence and its robustness grid."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.interval_decision import IntervalDecision, decide_by_interval
from ...stats.unit_intervals import record, unit_bootstrap, unit_share_decision, units_of
from ..claim import Claim, Formats, needs_rows
from ..claim_slices import Setting, grid_setting, options, sliced
from ..verdict import ClaimContext, Verdict, decide
from .analysis import PAPER_ESTIMATORS
from .contamination import c8_sentence, verdict_c8

#: A teacher draw: the runs of one (teacher kind, n, r*, spectrum, seed) share the teacher (its noise
#: levels and sample sizes are fits of the same draw).
TEACHER = ("teacher", "task.n", "task.r_star", "task.spectrum", "seed")


def _rate_decisions(g: pd.DataFrame, rate: float, prefix: str) -> dict[str, IntervalDecision]:
    """Per r*: the exact-recovery share over teacher draws against ``rate`` (Wilson)."""
    return {
        f"{prefix}r*={int(r)}": unit_share_decision(h, h["exact"].astype(bool), TEACHER, rate)
        for r, h in g.groupby("task.r_star")
    }


def _flag_decision(outside: pd.DataFrame, flag_rate: float) -> IntervalDecision:
    """The share of teacher draws flagged not identifiable outside the domain against ``flag_rate``."""
    return unit_share_decision(outside, outside["identifiable"] == 0, TEACHER, flag_rate)


def _rates_by_r(g: pd.DataFrame, col: str = "exact") -> dict[int, float]:
    return {int(r): float(h[col].mean()) for r, h in g.groupby("task.r_star")}


def _at_scale(table: pd.DataFrame, sigma_max: float) -> pd.DataFrame:
    """Runs at the largest N with σ <= sigma_max (where 'sufficient scale' is judged)."""
    if not len(table):
        return table
    return table[
        (table["n_samples"] == table["n_samples"].max()) & (table["task.sigma"] <= sigma_max + 1e-12)
    ]


def verdict_c9(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
    criterion = (
        f"linear teacher, both linear methods (V known: linear_v_known; V unknown: linear_v_unknown): at the largest N "
        f"and every sigma <= {cfg.verdict.sigma_max:g}, the exact-recovery rate (r_hat == r*) is >= {cfg.verdict.rate:g} for every r* in "
        f"the method's domain (spectra, seeds pooled); r* outside it (V unknown, n < d: r* >= min(n, d_v)) are flagged "
        f"not identifiable in >= {cfg.verdict.flag_rate:g} of runs. Each rate is a share of teacher draws (teacher, n, "
        "r*, spectrum, seed; every draw weighs the fraction of its runs) decided by its 95% Wilson interval: confirmed "
        "when every interval lies at or above its bar, refuted when one lies at or below it, else inconclusive"
    )
    statement = (
        "r* of a linear QK teacher is predicted exactly from data at sufficient N, with V known and unknown"
    )
    lin = rows[(rows["teacher"] == "linear") & rows["method"].isin(["linear_v_known", "linear_v_unknown"])]
    evidence, decisions = {}, {}
    for method in ("linear_v_known", "linear_v_unknown"):
        for n, g in _at_scale(lin[lin["method"] == method], cfg.verdict.sigma_max).groupby("task.n"):
            inside, outside = g[g["in_domain"]], g[~g["in_domain"]]
            rates = _rates_by_r(inside)
            flagged = float((outside["identifiable"] == 0).mean()) if len(outside) else None
            cell = _rate_decisions(inside, cfg.verdict.rate, f"{method}/n={int(n)}/")
            if len(outside):
                cell[f"{method}/n={int(n)}/flagged"] = _flag_decision(outside, cfg.verdict.flag_rate)
            decisions.update(cell)
            holds = bool(cell) and all(d.outcome is True for d in cell.values())
            evidence[f"{method}/n={int(n)}"] = {
                "N": int(g["n_samples"].max()),
                "rate_by_r_star": rates,
                "ok": holds,
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
    return Verdict("C9", decide(record(evidence, decisions)), criterion, evidence, "E6", statement)


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


def band_decision(value: float, interval: tuple[float, float], threshold: float, tol: float, above: bool):
    """:func:`band` decided by ``interval``: holds when it lies on the claimed side of ``threshold``,
    contradicted when it lies beyond ``threshold`` ∓ ``tol`` on the other side."""
    refute = threshold - tol if above else threshold + tol
    return decide_by_interval(
        value, interval, threshold, refute_threshold=refute, higher_is_better=above, unit="teacher draw"
    )


def _all_parts(parts: list[bool | None]) -> bool | None:
    """A sub-claim holds when every part holds, is contradicted when any part is, else undecided."""
    if any(p is False for p in parts):
        return False
    return True if parts and all(p is True for p in parts) else None


def _unit_values(g: pd.DataFrame, col: str) -> list[tuple[int, float]]:
    """``(r*, mean of col)`` per teacher draw: the unit the C10 bootstraps resample, within r*."""
    out = []
    for unit in units_of(g[g[col].notna()], TEACHER):
        out.append((int(unit["task.r_star"].iloc[0]), float(unit[col].mean())))
    return out


def _means(units: list[tuple[int, float]]) -> dict[int, float]:
    by: dict[int, list[float]] = {}
    for r, x in units:
        by.setdefault(r, []).append(x)
    return {r: float(np.mean(v)) for r, v in sorted(by.items())}


def _boot(units: list[tuple[int, float]], statistic) -> tuple[float, tuple[float, float]]:
    """A statistic of the per-r* means and its bootstrap interval over teacher draws (stratified by r*)."""
    keys = sorted({r for r, _ in units})
    codes = np.array([keys.index(r) for r, _ in units])
    values = np.array([x for _, x in units], dtype=float)

    def of(picked: np.ndarray) -> float:
        c = codes[picked]
        sums = np.bincount(c, weights=values[picked], minlength=len(keys))
        counts = np.bincount(c, minlength=len(keys))
        return statistic({r: s / n for r, s, n in zip(keys, sums, counts) if n})

    return unit_bootstrap(units, of, strata=[r for r, _ in units])


def _over(m: dict[int, float]) -> float:
    return min(v - r for r, v in m.items())


def _spread(m: dict[int, float]) -> float:
    return (max(m.values()) - min(m.values())) / (max(m) - min(m))


def c10_numerical(cfg, soft: pd.DataFrame) -> dict:
    """(b) numerical rank saturates: above r* + tol at every r*, and flat (spread <= half the r* span),
    each by its bootstrap interval over teacher draws."""
    tol = cfg.verdict.c10_tolerance
    units = _unit_values(soft, "est_numerical_rank") if "est_numerical_rank" in soft else []
    num = _means(units)
    if len(num) < 2:
        return {"mean_by_r_star": num, "holds": None}
    over, over_ci = _boot(units, _over)
    spread, spread_ci = _boot(units, _spread)
    decisions = {
        "over_r_star": band_decision(over, over_ci, tol, tol, above=True),
        "spread": band_decision(spread, spread_ci, 0.5, 0.5, above=False),
    }
    return {
        "mean_by_r_star": num,
        "min_over_r_star": over,
        "spread_over_r_star_span": spread,
        "decisions": decisions,
        "holds": _all_parts([d.outcome for d in decisions.values()]),
    }


def c10_energy(cfg, soft: pd.DataFrame) -> dict:
    """(c) energy rank over-estimates the smallest r* and compresses the largest (bias against r*), each
    end by its bootstrap interval over teacher draws."""
    tol = cfg.verdict.c10_tolerance
    if "est_energy_effective_rank" not in soft:
        return {"holds": None}
    units = _unit_values(soft.assign(b=soft["est_energy_effective_rank"] - soft["task.r_star"]), "b")
    bias = _means(units)
    if len(bias) < 2:
        return {"bias_vs_r_star": bias, "holds": None}
    small, small_ci = _boot(units, lambda m: m[min(m)])
    large, large_ci = _boot(units, lambda m: m[max(m)])
    decisions = {
        "over_smallest": band_decision(small, small_ci, tol, tol, above=True),
        "compresses_largest": band_decision(large, large_ci, -tol, tol, above=False),
    }
    parts = [d.outcome for d in decisions.values()]
    if -tol <= min(small_ci) and max(small_ci) <= tol and -tol <= min(large_ci) and max(large_ci) <= tol:
        parts.append(False)  # unbiased at both ends: the opposite of the claim
    out = {"bias_vs_r_star": bias, "bias_smallest_r_star": small, "bias_largest_r_star": large}
    if "true_energy_effective_rank" in soft:
        b = soft["est_energy_effective_rank"] - soft["true_energy_effective_rank"]
        out["bias_vs_energy_rank_of_K_star"] = _mean_by_r(soft.assign(b=b), "b")
    return {**out, "decisions": decisions, "holds": _all_parts(parts)}


def _last_step(g: pd.DataFrame) -> tuple[float | None, dict, tuple[float, float] | None]:
    col = "est_realised_mixer_energy_rank"
    units = _unit_values(g, col) if col in g else []
    m = _means(units)
    if len(m) < 2:
        return None, m, None
    step, ci = _boot(units, lambda mm: mm[sorted(mm)[-1]] - mm[sorted(mm)[-2]] if len(mm) > 1 else np.nan)
    return step, m, ci


def c10_mixer_at_n(cfg, soft: pd.DataFrame, lin: pd.DataFrame, n: int) -> dict:
    """(d) at one n: decided only where the two largest r* are both >= ``c10_regime``·n (r* >> n, where
    the linear mixer's rank min(r*, n) saturates); elsewhere undecided, the grid misses the regime."""
    tol = cfg.verdict.c10_tolerance
    step_soft, m_soft, ci_soft = _last_step(soft)
    step_lin, m_lin, ci_lin = _last_step(lin)
    r_stars = sorted(set(m_soft) & set(m_lin))
    in_regime = len(r_stars) >= 2 and r_stars[-2] >= cfg.verdict.c10_regime * n
    out = {
        "softmax_mean_by_r_star": m_soft,
        "linear_mean_by_r_star": m_lin,
        "softmax_last_step": step_soft,
        "linear_last_step": step_lin,
        "in_regime": bool(in_regime),
    }
    if not in_regime:
        reason = f"the two largest r* ({r_stars[-2:]}) are not both >= {cfg.verdict.c10_regime:g}·n = "
        return {**out, "holds": None, "reason": reason + f"{cfg.verdict.c10_regime * n:g}"}
    if step_soft is None or step_lin is None:
        return {**out, "holds": None}
    decisions = {
        "softmax_rises": band_decision(step_soft, ci_soft, tol, tol, above=True),
        "linear_flat": band_decision(step_lin, ci_lin, tol, tol, above=False),
    }
    return {**out, "decisions": decisions, "holds": _all_parts([d.outcome for d in decisions.values()])}


def c10_mixer(cfg, soft: pd.DataFrame, lin: pd.DataFrame) -> dict:
    """(d) realised-mixer energy rank rises between the two largest r* (softmax: informative) and does
    not for the linear teacher (saturated), decided per n where r* >> n; holds iff it holds at every
    such n, contradicted iff contradicted at one, undecided where no n of the grid reaches the regime."""
    by_n = {
        f"n={int(n)}": c10_mixer_at_n(cfg, g, lin[lin["task.n"] == n], int(n))
        for n, g in soft.groupby("task.n")
    }
    decided = [e["holds"] for e in by_n.values() if e["in_regime"]]
    decisions = {f"{k}/{name}": d for k, e in by_n.items() for name, d in e.pop("decisions", {}).items()}
    return {
        "by_n": by_n,
        "regime": f"the two largest r* both >= {cfg.verdict.c10_regime:g}·n",
        "n_in_regime": [k for k, e in by_n.items() if e["in_regime"]],
        "decisions": decisions,
        "holds": _all_parts(decided),
    }


def c10_checks(cfg, soft: pd.DataFrame, lin: pd.DataFrame) -> dict:
    """The sub-claims of C10 on softmax_linearised runs (softmax teacher ``soft``, linear ``lin``); (b)
    and (c) on the main grid's n (``task.ns``: every r* there), (d) per n including ``c10_ns``."""
    main = soft[soft["task.n"].isin(cfg.task.ns)]
    rates = {
        key: _rates_by_r(main.assign(hit=np.floor(main[f"est_{key}"] + 0.5) == main["task.r_star"]), "hit")
        for key in PAPER_ESTIMATORS
        if f"est_{key}" in main
    }
    rates["noise_calibrated_cut"] = _rates_by_r(main)
    return {
        "exact_rate_by_r_star": rates,
        "b_numerical_rank_saturates": c10_numerical(cfg, main),
        "c_energy_rank_over_small_compresses_large": c10_energy(cfg, main),
        "d_mixer_informative_softmax_saturated_linear": c10_mixer(cfg, soft, lin),
    }


C10_SUBCLAIMS = (
    "b_numerical_rank_saturates",
    "c_energy_rank_over_small_compresses_large",
    "d_mixer_informative_softmax_saturated_linear",
)


def _record_c10(evidence: dict, main_key: str, subs: list[bool | None]) -> None:
    """Every sub-claim's interval decisions as dicts (all V settings), and the main V's decisive one."""
    main_decisions: dict[str, IntervalDecision] = {}
    for setting, checks in evidence.items():
        if not setting.startswith("V_"):
            continue
        for key in C10_SUBCLAIMS:
            found = checks[key].pop("decisions", {})
            checks[key]["decisions"] = {k: d.to_dict() for k, d in found.items()}
            if setting == main_key:
                main_decisions.update({f"{key.split('_', 1)[0]}/{k}": d for k, d in found.items()})
    record(evidence, main_decisions)
    if None in subs and False not in subs:
        evidence.setdefault("decision", {})["undecided"] = [
            k for k, s in zip(C10_SUBCLAIMS, subs) if s is None
        ]


def verdict_c10(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
    t = cfg.verdict.c10_tolerance
    criterion = (
        f"softmax_linearised at the largest N, sigma <= {cfg.verdict.sigma_max:g}, V {cfg.verdict.c10_v}; each sub-claim against r*, "
        f"tolerance {t:g} rank units: (b) the paper's numerical rank saturates — mean - r* >= {t:g} at every r* "
        f"(contradicted if < 0) and its spread over r* <= half the r* span (contradicted if > the span); (c) the "
        f"paper's energy effective rank over-estimates the smallest r* (bias >= {t:g}; contradicted if < 0) and "
        f"compresses the largest (bias <= -{t:g}; contradicted if > 0; also contradicted if |bias| <= {t:g} at both); "
        f"(d) the paper's realised-mixer energy rank rises by >= {t:g} between the two largest r* for the softmax "
        f"teacher (contradicted if it falls) and by <= {t:g} for the linear one (contradicted if > {2 * t:g}), "
        f"decided per n where the two largest r* are both >= {cfg.verdict.c10_regime:g}·n (r* >> n; undecided at other n), "
        "holding iff it holds at every such n. (b), (c) on the n of task.ns. Every statistic is decided by its 95% "
        "bootstrap interval over teacher draws (resampled within r*): it holds when the interval lies on the claimed "
        "side, is contradicted when it lies beyond the contradiction bar. Confirmed iff all hold; refuted iff any is contradicted; else inconclusive"
    )
    statement = "the paper's data-only estimators recover r* of a softmax teacher only partially"
    linearised = (
        _at_scale(rows[rows["method"] == "softmax_linearised"], cfg.verdict.sigma_max) if len(rows) else rows
    )
    evidence: dict = {"paper_estimators": PAPER_NAMES}
    for v, g in linearised.groupby("v") if len(linearised) else ():
        evidence[f"V_{v}"] = c10_checks(cfg, g[g["teacher"] == "softmax"], g[g["teacher"] == "linear"])
    main = evidence.get(f"V_{cfg.verdict.c10_v}")
    subs = [main[k]["holds"] for k in C10_SUBCLAIMS] if main is not None else [None]
    _record_c10(evidence, f"V_{cfg.verdict.c10_v}", subs)
    if main is None:
        return Verdict("C10", "inconclusive", criterion, evidence, "E6", statement)
    evidence["sub_claims_holding"] = sum(s is True for s in subs)
    evidence["sub_claims_contradicted"] = sum(s is False for s in subs)
    verdict = (
        "refuted" if False in subs else ("confirmed" if all(s is True for s in subs) else "inconclusive")
    )
    return Verdict("C10", verdict, criterion, evidence, "E6", statement)


def verdict_x1(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
    """X1 on the softmax_log_attention runs; the recovery frontier (``context.tables["frontier"]``) is
    computed once from every run."""
    frontier = context.tables["frontier"]
    criterion = (
        f"softmax teacher, softmax_log_attention: inside its domain (V known, n <= min(d, d_v)) the exact-recovery rate "
        f"at the largest N is >= {cfg.verdict.rate:g} for every r* and every sigma <= {cfg.verdict.sigma_max:g}; outside it (V unknown "
        f"or n > min(d, d_v)) >= {cfg.verdict.flag_rate:g} of runs are flagged not identifiable. Each rate is a share of "
        "teacher draws (teacher, n, r*, spectrum, seed) decided by its 95% Wilson interval: confirmed when every interval "
        "lies at or above its bar, refuted when one lies at or below it, else inconclusive"
    )
    statement = "a data-only predictor is exact for softmax teachers wherever r* is identifiable"
    soft = rows[(rows["teacher"] == "softmax") & (rows["method"] == "softmax_log_attention")]
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
    decisions = {}
    for sigma, g in scale.groupby("task.sigma"):
        decisions.update(_rate_decisions(g, cfg.verdict.rate, f"sigma={sigma:g}/"))
    exact = _all_hold(decisions.values())
    for (n, v), g in outside.groupby(["task.n", "v"]):
        decisions[f"flagged/n={int(n)}/V {v}"] = _flag_decision(g, cfg.verdict.flag_rate)
    flags = [d for k, d in decisions.items() if k.startswith("flagged/")]
    evidence["exact_inside"], evidence["flagged_outside"] = exact, _all_hold(flags)
    return Verdict("X1", decide(record(evidence, decisions)), criterion, evidence, "E6", statement)


def _all_hold(decisions) -> bool | None:
    """True when every decision confirms, False when one refutes, else None."""
    outcomes = [d.outcome for d in decisions]
    return False if False in outcomes else (True if outcomes and all(outcomes) else None)


#: E6 boundary axes: (config key, result column).
AXES = (("ns", "task.n"), ("spectra", "task.spectrum"), ("seed", "seed"))


LINEAR_METHODS = ["linear_v_known", "linear_v_unknown"]


def _sigma_options(cfg, rows: pd.DataFrame) -> list[Setting]:
    """The verdict judged at every other noise level of the grid (``sigma_max``)."""
    levels = sorted(set(cfg.task.sigmas) | {cfg.task.sigma_ref})
    return options(cfg, rows, "verdict.sigma_max", [s for s in levels if s != cfg.verdict.sigma_max])


def c9_grid(cfg, table: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C9 decided again per n, spectrum and seed, and at every noise level of the grid."""
    rows = table[table["method"].isin(LINEAR_METHODS)] if len(table) else table
    return sliced(cfg, rows, AXES) + _sigma_options(cfg, rows)


def c10_grid(cfg, table: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C10 decided again per n, spectrum and seed, and in the other V setting."""
    rows = table[table["method"] == "softmax_linearised"] if len(table) else table
    others = [v for v in cfg.v_settings if v != cfg.verdict.c10_v]
    return sliced(cfg, rows, AXES) + options(cfg, rows, "verdict.c10_v", others)


def x1_grid(cfg, table: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """X1 decided again per n (where users work: n = d = d_v), spectrum and seed, and at every noise level."""
    rows = table[table["method"] == "softmax_log_attention"] if len(table) else table
    return sliced(cfg, rows, AXES) + _sigma_options(cfg, rows)


def c9_sentence(e: dict, fmt: Formats) -> str:
    parts = []
    for cell, v in e.items():
        if not isinstance(v, dict) or "rate_by_r_star" not in v:
            continue
        rates = list(v["rate_by_r_star"].values())
        text = f"{cell.replace('_', ' ')} (N = {v['N']}): exact rate ≥ {fmt.number(min(rates))} on {len(rates)} r*"
        if v.get("out_of_domain_flagged") is not None:
            text += f", outside the domain flagged {fmt.pct(v['out_of_domain_flagged'])}"
        parts.append(text)
    if not parts:
        raise KeyError("rate_by_r_star")
    return "; ".join(parts)


def c10_sentence(e: dict, fmt: Formats) -> str:
    marks = []
    for setting, checks in e.items():
        if setting in ("paper_estimators",) or not isinstance(checks, dict):
            continue
        word = {True: "holds", False: "contradicted", None: "undecided"}
        subs = [
            f"{key.split('_', 1)[0]} {word[sub['holds']]}"
            for key, sub in checks.items()
            if isinstance(sub, dict) and "holds" in sub
        ]
        if subs:
            marks.append(f"{setting.replace('_', ' ')}: {', '.join(subs)}")
    if not marks:
        raise KeyError("sub-claims")
    return (
        f"{e['sub_claims_holding']} sub-claim(s) hold, {e['sub_claims_contradicted']} contradicted — "
        + "; ".join(marks)
    )


def x1_sentence(e: dict, fmt: Formats) -> str:
    rates = ", ".join(f"σ {s}: {fmt.number(r)}" for s, r in e["rate_by_sigma_at_N_max_all"].items())
    return (
        f"exact inside the domain: {fmt.number(e['exact_inside'])}; flagged outside: {fmt.number(e['flagged_outside'])}; "
        f"exact rate at N = {e['N']}: {rates}"
    )


def c8_grid(cfg, table: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C8 decided again per n, spectrum and seed, and in the other V setting (as C10)."""
    return c10_grid(cfg, table, context)


def _ns_setting(cfg, *keys: str) -> dict:
    """The default setting with ``ns`` every n the softmax_linearised rows have (task.ns and c10_ns)."""
    return {**grid_setting(cfg, *keys), "ns": sorted({*cfg.task.ns, *cfg.c10_ns})}


C8 = Claim(
    "C8",
    decide=needs_rows("C8", "E6", verdict_c8),
    sentence=c8_sentence,
    default_setting=lambda cfg: _ns_setting(cfg, "task.spectra", "verdict.c10_v"),
    statistic="energy_to_numerical_ratio",
    grid=c8_grid,
)
C9 = Claim(
    "C9",
    decide=needs_rows("C9", "E6", verdict_c9),
    sentence=c9_sentence,
    default_setting=lambda cfg: grid_setting(cfg, "task.ns", "task.spectra", "verdict.sigma_max"),
    statistic="min_rate_in_domain",
    grid=c9_grid,
)
C10 = Claim(
    "C10",
    decide=needs_rows("C10", "E6", verdict_c10),
    sentence=c10_sentence,
    default_setting=lambda cfg: _ns_setting(cfg, "task.spectra", "verdict.c10_v"),
    statistic="sub_claims_holding",
    grid=c10_grid,
)
X1 = Claim(
    "X1",
    decide=needs_rows("X1", "E6", verdict_x1),
    sentence=x1_sentence,
    default_setting=lambda cfg: {
        **grid_setting(cfg, "task.spectra", "verdict.sigma_max"),
        "ns": sorted({*cfg.task.ns, *cfg.x1_ns}),
    },
    statistic="min_rate_inside",
    grid=x1_grid,
)
CLAIMS = (C8, C9, C10, X1)
