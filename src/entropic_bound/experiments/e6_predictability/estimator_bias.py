"""C10: the paper's estimators against r* for softmax teachers — the numerical rank's saturation,
the energy rank's bias at both ends, and the realised-mixer energy rank's informativeness — each
sub-claim decided by its interval over teacher draws, with its report sentence."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.interval_decision import IntervalDecision, decide_by_interval
from ...stats.unit_intervals import record, unit_bootstrap, units_of
from ..framework.claim import Formats
from ..framework.verdict import ClaimContext, Finding
from .analysis import PAPER_ESTIMATORS, TEACHER_DRAW, at_scale, rates_by_r


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
        value, interval, threshold, refute_threshold=refute, higher_is_better=above, unit=TEACHER_DRAW.name
    )


def _all_parts(parts: list[bool | None]) -> bool | None:
    """A sub-claim holds when every part holds, is contradicted when any part is, else undecided."""
    if any(p is False for p in parts):
        return False
    return True if parts and all(p is True for p in parts) else None


def _unit_values(g: pd.DataFrame, col: str) -> list[tuple[int, float]]:
    """``(r*, mean of col)`` per teacher draw: the unit the C10 bootstraps resample, within r*."""
    out = []
    for unit in units_of(g[g[col].notna()], TEACHER_DRAW.keys):
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
        key: rates_by_r(main.assign(hit=np.floor(main[f"est_{key}"] + 0.5) == main["task.r_star"]), "hit")
        for key in PAPER_ESTIMATORS
        if f"est_{key}" in main
    }
    rates["noise_calibrated_cut"] = rates_by_r(main)
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


def verdict_c10(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
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
    linearised = (
        at_scale(rows[rows["method"] == "softmax_linearised"], cfg.verdict.sigma_max) if len(rows) else rows
    )
    evidence: dict = {"paper_estimators": PAPER_NAMES}
    for v, g in linearised.groupby("v") if len(linearised) else ():
        evidence[f"V_{v}"] = c10_checks(cfg, g[g["teacher"] == "softmax"], g[g["teacher"] == "linear"])
    main = evidence.get(f"V_{cfg.verdict.c10_v}")
    subs = [main[k]["holds"] for k in C10_SUBCLAIMS] if main is not None else [None]
    _record_c10(evidence, f"V_{cfg.verdict.c10_v}", subs)
    if main is None:
        return Finding("inconclusive", criterion, evidence)
    evidence["sub_claims_holding"] = sum(s is True for s in subs)
    evidence["sub_claims_contradicted"] = sum(s is False for s in subs)
    verdict = (
        "refuted" if False in subs else ("confirmed" if all(s is True for s in subs) else "inconclusive")
    )
    return Finding(verdict, criterion, evidence)


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
