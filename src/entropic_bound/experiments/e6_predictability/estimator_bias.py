"""C10: the paper's estimators against r* for softmax teachers — the numerical rank's saturation,
the energy rank's bias at both ends, and the realised-mixer energy rank's informativeness — each
sub-claim decided by its interval over teacher draws, with its report sentence."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.draw_keys import with_draw
from ...stats.interval_decision import IntervalDecision, decide_by_interval
from ...stats.unit_intervals import record, unit_bootstrap, units_of
from ..framework.claim import Formats
from ..framework.verdict import ClaimContext, Finding
from .analysis import PAPER_ESTIMATORS, TEACHER_DRAW, at_scale, rates_by_r, undecided_reason


def _mean_by_r(g: pd.DataFrame, col: str) -> dict[int, float]:
    return {int(r): float(h[col].mean()) for r, h in g.groupby("task.r_star") if h[col].notna().any()}


#: The paper's names for the estimators C10 is about (the predictor's ``est_<key>`` columns).
PAPER_NAMES = {
    "numerical_rank": "numerical rank (tol 1e-2 of s_1) of the linearised kernel — the paper's estimator",
    "energy_effective_rank": "energy effective rank R̃_eff of the linearised kernel — the paper's estimator",
    "realised_mixer_energy_rank": "realised-mixer energy rank (mean over inputs) — the paper's estimator",
}


#: (b)'s saturation boundary: the numerical rank's spread over r* as a share of the r* span (0: flat,
#: 1: it tracks r* one for one). Saturated means set by the contamination more than by r*: below the
#: midpoint, it moves less than half as much as r* does.
SATURATION_SPREAD = 0.5


def band(value: float | None, boundary: float, above: bool) -> bool | None:
    """A one-sided sub-claim at one boundary: True when ``value`` is on the claimed side of ``boundary``
    (at or beyond it), False when it is on the other side, None without data."""
    if value is None or not np.isfinite(value):
        return None
    return bool(value >= boundary) if above else bool(value <= boundary)


def band_decision(value: float, interval: tuple[float, float], boundary: float, above: bool, units: int):
    """:func:`band` decided by ``interval`` over ``units`` teacher draws: holds when it lies on the claimed
    side of ``boundary``, contradicted when it lies on the other side, undecided while it reaches it."""
    return decide_by_interval(
        value, interval, boundary, higher_is_better=above, unit=TEACHER_DRAW.name, units=units
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
    """(b) numerical rank saturates: read above r* at every r* (mean − r* against ``tol``, the rounding
    boundary of a rank) and flat (spread against :data:`SATURATION_SPREAD` of the r* span), each by its
    bootstrap interval over teacher draws."""
    tol = cfg.verdict.c10_tolerance
    units = _unit_values(soft, "est_numerical_rank") if "est_numerical_rank" in soft else []
    num = _means(units)
    if len(num) < 2:
        return {"mean_by_r_star": num, "holds": None}
    over, over_ci = _boot(units, _over)
    spread, spread_ci = _boot(units, _spread)
    decisions = {
        "over_r_star": band_decision(over, over_ci, tol, True, len(units)),
        "spread": band_decision(spread, spread_ci, SATURATION_SPREAD, False, len(units)),
    }
    return {
        "mean_by_r_star": num,
        "min_over_r_star": over,
        "spread_over_r_star_span": spread,
        "decisions": decisions,
        "holds": _all_parts([d.outcome for d in decisions.values()]),
    }


def c10_energy(cfg, soft: pd.DataFrame) -> dict:
    """(c) energy rank over-estimates the smallest r* (bias against +tol) and compresses the largest
    (against −tol): a bias inside ±tol rounds to r*, the rank read is exact there. Each end by its
    bootstrap interval over teacher draws."""
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
        "over_smallest": band_decision(small, small_ci, tol, True, len(units)),
        "compresses_largest": band_decision(large, large_ci, -tol, False, len(units)),
    }
    parts = [d.outcome for d in decisions.values()]
    out = {"bias_vs_r_star": bias, "bias_smallest_r_star": small, "bias_largest_r_star": large}
    if "true_energy_effective_rank" in soft:
        b = soft["est_energy_effective_rank"] - soft["true_energy_effective_rank"]
        out["bias_vs_energy_rank_of_K_star"] = _mean_by_r(soft.assign(b=b), "b")
    return {**out, "decisions": decisions, "holds": _all_parts(parts)}


def _last_step(g: pd.DataFrame) -> tuple[float | None, dict, tuple[float, float] | None, int]:
    col = "est_realised_mixer_energy_rank"
    units = _unit_values(g, col) if col in g else []
    m = _means(units)
    if len(m) < 2:
        return None, m, None, len(units)
    step, ci = _boot(units, lambda mm: mm[sorted(mm)[-1]] - mm[sorted(mm)[-2]] if len(mm) > 1 else np.nan)
    return step, m, ci, len(units)


def c10_mixer_at_n(cfg, soft: pd.DataFrame, lin: pd.DataFrame, n: int) -> dict:
    """(d) at one n: the rise between the two largest r* against ``tol`` (a rise below half a rank unit
    does not change the rank read: not informative), softmax above, linear at or below; decided only
    where the two largest r* are both >= ``c10_regime``·n (r* >> n, where the linear mixer's rank
    min(r*, n) saturates); elsewhere undecided, the grid misses the regime."""
    tol = cfg.verdict.c10_tolerance
    step_soft, m_soft, ci_soft, n_soft = _last_step(soft)
    step_lin, m_lin, ci_lin, n_lin = _last_step(lin)
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
        "softmax_rises": band_decision(step_soft, ci_soft, tol, True, n_soft),
        "linear_flat": band_decision(step_lin, ci_lin, tol, False, n_lin),
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


def c10_criterion(cfg) -> str:
    t, v = cfg.verdict.c10_tolerance, cfg.verdict
    return (
        f"softmax_linearised at the largest N, sigma <= {v.sigma_max:g}, V {v.c10_v}; each sub-claim against r*, every "
        f"statistic against one boundary. The rank boundary is {t:g} rank units: a rank is read by rounding, so an "
        f"estimate within {t:g} of a value reads as that value. (b) the paper's numerical rank saturates: min over r* of "
        f"mean − r* at or above {t:g} (it reads above r* everywhere) and its spread over r* (as a share of the r* span) "
        f"at or below {SATURATION_SPREAD:g} (it moves less than half as much as r*); (c) the paper's energy effective "
        f"rank over-estimates the smallest r* (bias at or above {t:g}) and compresses the largest (bias at or below "
        f"-{t:g}); (d) the paper's realised-mixer energy rank rises by at least {t:g} between the two largest r* for the "
        f"softmax teacher and by at most {t:g} for the linear one, decided per n where the two largest r* are both >= "
        f"{v.c10_regime:g}·n (r* >> n; undecided at other n), holding iff it holds at every such n. (b), (c) on the n "
        "of task.ns. Every statistic is decided by its 95% bootstrap interval over teacher draws (n, r*, spectrum, seed, "
        "draw; resampled within r*): it holds when the interval lies on the claimed side of its boundary, is "
        "contradicted when it lies on the other side. Confirmed iff all hold; refuted iff any is contradicted "
        "(stats.unit_intervals.all_of); else inconclusive"
    )


def _undecided(evidence: dict, subs: list[bool | None]) -> str:
    """Why C10 is undecided: a statistic whose interval reaches its boundary, else a sub-claim whose
    regime the grid misses."""
    decisions = evidence.get("decisions") or {"": evidence.get("decision") or {}}
    for name, d in decisions.items():
        if d and min(d["interval"]) < d["threshold"] < max(d["interval"]):
            return undecided_reason({"decision": {"condition": name, **d}}, "teacher draws")
    missing = [k for k, s in zip(C10_SUBCLAIMS, subs) if s is None]
    return f"undecided sub-claim(s) {', '.join(missing)}: no n of the grid reaches their regime, or no rows"


def verdict_c10(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    rows = with_draw(rows)
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
        evidence["reason"] = f"no softmax_linearised runs with V {cfg.verdict.c10_v} at the largest N"
        return Finding("inconclusive", c10_criterion(cfg), evidence)
    evidence["sub_claims_holding"] = sum(s is True for s in subs)
    evidence["sub_claims_contradicted"] = sum(s is False for s in subs)
    verdict = (
        "refuted" if False in subs else ("confirmed" if all(s is True for s in subs) else "inconclusive")
    )
    if verdict == "inconclusive":
        evidence["reason"] = _undecided(evidence, subs)
    return Finding(verdict, c10_criterion(cfg), evidence)


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
