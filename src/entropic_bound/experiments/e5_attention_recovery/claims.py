"""E5's claim C7 (C8 moved to E6; E5 keeps its control table): each criterion, its report sentence and its robustness grid."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..claim import Claim, Formats
from ..claim_slices import Setting, grid_setting, options, sliced
from ..verdict import ClaimContext, Verdict
from .analysis import identified


def _recovery_rate(g: pd.DataFrame, col: str, tol: float) -> float | None:
    return float(((g[col] - g["task.r_star"]).abs() <= tol).mean()) if len(g) else None


def learned(cfg, rows: pd.DataFrame) -> pd.Series:
    """Runs that fit their training data: final train loss <= c7_fit·max(σ², 1e-4)."""
    return rows["train_loss"] <= cfg.verdict.c7_fit * np.maximum(rows["task.sigma"] ** 2, 1e-4)


def _low_rank_rate(g: pd.DataFrame, col: str, tol: float) -> float | None:
    return float((g[col] <= g["task.r_star"] + tol).mean()) if len(g) else None


def c7_cells(cfg, g: pd.DataFrame) -> dict:
    """One teacher's numbers (learned runs only): recovery from small init on identified data, and the
    low-rank rate (estimate <= r* + tolerance) of small and large init where K is under-identified."""
    col, tol = f"K_{cfg.verdict.c7_estimator}", cfg.verdict.c7_tolerance
    fit = g[learned(cfg, g)]
    small, ident = fit["init_scale"] <= cfg.verdict.small_init_max, identified(fit)
    low_small = _low_rank_rate(fit[small & ~ident], col, tol)
    low_large = _low_rank_rate(fit[~small & ~ident], col, tol)
    return {
        "small_init_identified_recovery": _recovery_rate(fit[small & ident], col, tol),
        "large_init_identified_recovery": _recovery_rate(fit[~small & ident], col, tol),
        "small_init_under_identified_low_rank": low_small,
        "large_init_under_identified_low_rank": low_large,
        "contrast": None if low_small is None or low_large is None else low_small - low_large,
        "median_estimate_small_under": float(fit[small & ~ident][col].median())
        if (small & ~ident).any()
        else None,
        "median_estimate_large_under": float(fit[~small & ~ident][col].median())
        if (~small & ~ident).any()
        else None,
        "median_rel_excess_identified": float(fit[ident]["rel_excess"].median()) if ident.any() else None,
        "runs": int(len(g)),
        "set_aside_not_learned": int(len(g) - len(fit)),
    }


def c7_decision(cfg, cells: dict) -> bool | None:
    """True: small init recovers r* on identified data and the under-identified contrast is >= c7_contrast;
    False: small init misses r* on identified data, or small init is no more often low rank than large init
    although large init leaves room for the contrast."""
    recovery, contrast = cells["small_init_identified_recovery"], cells["contrast"]
    if recovery is not None and recovery < cfg.verdict.c7_rate:
        return False
    # where large init is itself low rank (r* near d), no contrast of c7_contrast can show: no power
    large = cells["large_init_under_identified_low_rank"]
    if contrast is not None and large is not None and large > 1 - cfg.verdict.c7_contrast:
        return None
    if contrast is not None and contrast <= 0:
        return False
    if recovery is None or contrast is None:
        return None
    return True if contrast >= cfg.verdict.c7_contrast else None


def verdict_c7(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
    col = f"K_{cfg.verdict.c7_estimator}"
    criterion = (
        f"implicit bias, per teacher, on runs that fit their data (train loss <= {cfg.verdict.c7_fit:g}·max(σ², 1e-4)), "
        f"estimator {cfg.verdict.c7_estimator} of K: (i) on data that identify K (N·n >= d) GD from small init (<= "
        f"{cfg.verdict.small_init_max:g}) has |estimate - r*| <= {cfg.verdict.c7_tolerance:g} in >= {cfg.verdict.c7_rate:.0%} of runs; (ii) on "
        f"data that do not (N·n < d) the fraction of small-init runs with a low-rank answer (estimate <= r* + "
        f"{cfg.verdict.c7_tolerance:g}) exceeds large init's by >= {cfg.verdict.c7_contrast:g}. Confirmed iff (i) and (ii) for every "
        "teacher; refuted iff (i) fails or small init is no more often low rank than large init while large init is low rank in at most "
        f"{1 - cfg.verdict.c7_contrast:.0%} of its runs (else the contrast has no room); else inconclusive"
    )
    statement = (
        "GD from small init on an over-parameterised attention student learns a kernel of rank r* (implicit bias: "
        "where the data do not identify K, small init still finds a low-rank kernel and large init does not)"
    )
    if not len(rows) or col not in rows:
        ev = {"runs": 0}
        return Verdict("C7", "inconclusive", criterion, ev, "E5", statement)
    by = {kind: c7_cells(cfg, g) for kind, g in rows.groupby("teacher")}
    decisions = {kind: c7_decision(cfg, c) for kind, c in by.items()}
    contrasts = [c["contrast"] for c in by.values() if c["contrast"] is not None]
    evidence = {
        "estimator": cfg.verdict.c7_estimator,
        "tolerance": cfg.verdict.c7_tolerance,
        "by_teacher": by,
        "decision_by_teacher": decisions,
        "min_contrast": min(contrasts) if contrasts else None,
    }
    values = list(decisions.values())
    verdict = "refuted" if False in values else ("confirmed" if values and all(values) else "inconclusive")
    return Verdict("C7", verdict, criterion, evidence, "E5", statement)


C7_ESTIMATORS = ("energy_threshold_rank_99", "energy_effective_rank", "numerical_rank", "largest_gap_rank")


AXES = (("spectra", "task.spectrum"), ("r_stars", "task.r_star"), ("seed", "seed"))


def c7_grid(cfg, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C7 decided again per spectrum, r*, seed and with the other estimators of K's rank."""
    others = [k for k in C7_ESTIMATORS if k != cfg.verdict.c7_estimator]
    return sliced(cfg, rows, AXES) + options(cfg, rows, "verdict.c7_estimator", others)


def c7_sentence(e: dict, fmt: Formats) -> str:
    parts = [
        f"{t} {fmt.pct(v['small_init_under_identified_low_rank'])} vs {fmt.pct(v['large_init_under_identified_low_rank'])}"
        for t, v in e["by_teacher"].items()
    ]
    recovery = ", ".join(
        f"{t} {fmt.pct(v['small_init_identified_recovery'])}" for t, v in e["by_teacher"].items()
    )
    return (
        f"under-identified data, low-rank answer ({e['estimator']}) from small vs large init: {', '.join(parts)} "
        f"(smallest contrast {fmt.number(e['min_contrast'])}, needed {fmt.number(e['tolerance'])}); "
        f"identified data, small init recovers r*: {recovery}"
    )


C7 = Claim(
    "C7",
    decide=verdict_c7,
    sentence=c7_sentence,
    default_setting=lambda cfg: grid_setting(cfg, "task.spectra", "task.r_stars", "verdict.c7_estimator"),
    statistic="min_contrast",
    grid=c7_grid,
)
# C8 (the energy rank's robustness to the softmax) is decided in E6, where the softmax contaminates the
# estimate; E5's learned kernels equal K* under both teachers, so its
# c8_softmax_vs_linear table (analysis.c8_table) stays as the control where there is nothing to detect.
CLAIMS = (C7,)
