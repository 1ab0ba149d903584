"""E5's claim C7 (C8 moved to E6; E5 keeps its control table): each criterion, its report sentence and its robustness grid."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.cluster import wilson
from ..framework.claim import Claim, Formats
from ..framework.claim_slices import Setting, grid_setting, options, sliced
from ..framework.verdict import ClaimContext, Verdict
from ..science.implicit_bias import bias_contrast, contrast_outcome, detectable
from .analysis import identified
from .recovery import estimator_rule


def _recovered(g: pd.DataFrame, col: str, tol: float) -> pd.Series:
    """Two-sided: |estimate − r*| <= tol (an estimate below r* is no recovery)."""
    return (g[col] - g["task.r_star"]).abs() <= tol


def _share(mask: pd.Series) -> float | None:
    return float(mask.mean()) if len(mask) else None


def learned(cfg, rows: pd.DataFrame) -> pd.Series:
    """Runs that fit their training data: final train loss <= c7_fit·max(σ², 1e-4)."""
    return rows["train_loss"] <= cfg.verdict.c7_fit * np.maximum(rows["task.sigma"] ** 2, 1e-4)


DATA_SET = ["task.r_star", "task.spectrum", "v", "train.n_samples", "seed"]


def _min_norm_by_data_set(under: pd.DataFrame, min_norm_col: str) -> dict:
    if not len(under):
        return {}
    first = under.groupby(DATA_SET)[min_norm_col].first()
    return {
        f"r*={r}, {sp}, V {v}, N={N}, seed {s}": round(float(x), 4) for (r, sp, v, N, s), x in first.items()
    }


def c7_cells(cfg, g: pd.DataFrame, key: str) -> tuple[dict, object]:
    """One teacher's numbers (learned runs only): recovery from small init on identified data (with its
    Wilson interval), and the small-minus-large recovery contrast on under-identified data sets whose
    minimum-norm kernel is above r* + tolerance; and the contrast's interval decision (or None)."""
    v = cfg.verdict
    col, min_norm_col, tol = f"K_{key}", f"min_norm_{key}", v.c7_tolerance
    fit = g[learned(cfg, g)]
    ident = identified(fit)
    small, large = fit["init_scale"] <= v.small_init_max, fit["init_scale"] >= v.large_init_min
    room = ~ident & detectable(
        fit.assign(**{min_norm_col: fit[min_norm_col].fillna(-np.inf)}), min_norm_col, tol
    )
    small_under, large_under = fit[small & room], fit[large & room]
    contrast = bias_contrast(
        small_under,
        large_under,
        _recovered(small_under, col, tol),
        _recovered(large_under, col, tol),
        v.c7_contrast,
    )
    decision = contrast.pop("decision")
    small_ident = _recovered(fit[small & ident], col, tol)
    under = fit[~ident]
    return {
        "small_init_identified_recovery": _share(small_ident),
        "small_init_identified_recovery_interval": list(wilson(int(small_ident.sum()), len(small_ident)))
        if len(small_ident)
        else None,
        "large_init_identified_recovery": _share(_recovered(fit[large & ident], col, tol)),
        "small_init_under_identified_recovery": _share(_recovered(small_under, col, tol)),
        "large_init_under_identified_recovery": _share(_recovered(large_under, col, tol)),
        **contrast,
        "min_norm_rank": _min_norm_by_data_set(under, min_norm_col),
        "data_sets_with_room": int(fit[room].groupby(DATA_SET).ngroups) if room.any() else 0,
        "median_estimate_small_under": float(small_under[col].median()) if len(small_under) else None,
        "median_estimate_large_under": float(large_under[col].median()) if len(large_under) else None,
        "median_rel_excess_identified": float(fit[ident]["rel_excess"].median()) if ident.any() else None,
        "runs": int(len(g)),
        "set_aside_not_learned": int(len(g) - len(fit)),
    }, decision


def c7_decision(cfg, cells: dict, decision) -> tuple[bool | None, str]:
    """(True / False / None, reason) for one teacher: refuted when small init's identified recovery is
    below c7_rate beyond doubt (Wilson upper end < c7_rate) or the contrast's interval is at or below 0;
    confirmed when the contrast's lower end reaches c7_contrast; else inconclusive."""
    v, interval = cfg.verdict, cells["small_init_identified_recovery_interval"]
    if interval is not None and interval[1] < v.c7_rate:
        return (
            False,
            f"small init recovers r* on identified data in {cells['small_init_identified_recovery']:.0%} (interval below {v.c7_rate:.0%})",
        )
    if not cells["data_sets_with_room"]:
        return (
            None,
            f"nothing to detect: no under-identified data set has a minimum-norm kernel above r* + {v.c7_tolerance:g}",
        )
    if decision is None:
        return None, "no learned small- or large-init runs on under-identified data with room for a bias"
    return contrast_outcome(decision, v.c7_contrast)


def _criterion(cfg, key: str) -> str:
    v = cfg.verdict
    return (
        f"implicit bias, per teacher, on runs that fit their data (train loss <= {v.c7_fit:g}·max(σ², 1e-4)), estimator "
        f"{key} of K (chosen on the ground truth, see estimator_rule); a run recovers when |estimate - r*| <= "
        f"{v.c7_tolerance:g}. (i) On data that identify K (N·n >= d) small init (<= {v.small_init_max:g}) recovers: refuted "
        f"when the Wilson 95 % upper end of its recovery share is below {v.c7_rate:.0%}; (ii) on under-identified data "
        f"(N·n < d) whose minimum-norm kernel has rank > r* + {v.c7_tolerance:g} (min_norm_rank, same estimator), small minus "
        f"large init (>= {v.large_init_min:g}) recovery share, Newcombe 95 % interval over runs: lower end >= "
        f"{v.c7_contrast:g} confirmed, upper end <= 0 refuted, else inconclusive; no data set with room: inconclusive "
        "(nothing to detect). Confirmed iff every teacher is; refuted iff one is; else inconclusive"
    )


def verdict_c7(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
    rule = estimator_rule(cfg, context.seeds)
    key = cfg.verdict.c7_estimator or rule["estimator"]
    col = f"K_{key}"
    criterion = _criterion(cfg, key)
    statement = (
        "GD from small init on an over-parameterised attention student learns a kernel of rank r* (implicit bias: "
        "where the data do not force a low-rank kernel, small init still recovers r* and large init does not)"
    )
    evidence: dict = {
        "estimator": key,
        "estimator_on_truth": rule["estimator_on_truth"],
        "estimator_rule": {k: x for k, x in rule.items() if k != "estimator_on_truth"},
        "tolerance": cfg.verdict.c7_tolerance,
    }
    if cfg.verdict.c7_estimator is not None and key != rule["estimator"]:
        evidence["non_standard"] = (
            f"estimator set by verdict.c7_estimator, not the rule's {rule['estimator']}"
        )
    if not len(rows) or col not in rows:
        evidence.update(runs=0, reason="no runs")
        return Verdict("C7", "inconclusive", criterion, evidence, "E5", statement)
    if f"min_norm_{key}" not in rows:
        evidence.update(
            reason=f"min_norm_rank absent: the rows lack min_norm_{key} (E5AttentionRecovery.prepare adds it)"
        )
        return Verdict("C7", "inconclusive", criterion, evidence, "E5", statement)
    by, decided, reasons = {}, {}, {}
    for kind, g in rows.groupby("teacher"):
        by[kind], decided[kind] = c7_cells(cfg, g, key)
        outcome, reason = c7_decision(cfg, by[kind], decided[kind])
        by[kind]["decision"] = decided[kind].to_dict() if decided[kind] is not None else None
        reasons[kind] = (outcome, reason)
    values = [o for o, _ in reasons.values()]
    contrasts = [c["contrast"] for c in by.values() if c["contrast"] is not None]
    binding = [d for d in decided.values() if d is not None]
    evidence.update(
        by_teacher=by,
        decision_by_teacher={k: o for k, (o, _) in reasons.items()},
        min_contrast=min(contrasts) if contrasts else None,
        decision=min(binding, key=lambda d: d.margin).to_dict() if binding else None,
    )
    why = "; ".join(f"{k}: {r}" for k, (_, r) in reasons.items() if r)
    if why:
        evidence["reason"] = why
    verdict = "refuted" if False in values else ("confirmed" if values and all(values) else "inconclusive")
    return Verdict("C7", verdict, criterion, evidence, "E5", statement)


C7_ESTIMATORS = ("energy_threshold_rank_99", "energy_effective_rank", "numerical_rank", "largest_gap_rank")


AXES = (("spectra", "task.spectrum"), ("r_stars", "task.r_star"), ("seed", "seed"))


def c7_grid(cfg, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C7 decided again per spectrum, r*, seed and with the other estimators of K's rank (explicit
    overrides: non-standard settings)."""
    chosen = cfg.verdict.c7_estimator or estimator_rule(cfg, context.seeds)["estimator"]
    others = [k for k in C7_ESTIMATORS if k != chosen]
    return sliced(cfg, rows, AXES) + options(cfg, rows, "verdict.c7_estimator", others)


def c7_sentence(e: dict, fmt: Formats) -> str:
    lead = f"{e['reason']}; " if e.get("reason") else ""
    if "by_teacher" not in e:
        return f"{lead}estimator {e['estimator']}"
    parts = [
        f"{t} {fmt.pct(v['small_init_under_identified_recovery'])} vs {fmt.pct(v['large_init_under_identified_recovery'])}"
        for t, v in e["by_teacher"].items()
    ]
    recovery = ", ".join(
        f"{t} {fmt.pct(v['small_init_identified_recovery'])}" for t, v in e["by_teacher"].items()
    )
    return (
        f"{lead}{e['estimator']} (rule on the truth): under-identified data with room for a bias, recovery from small "
        f"vs large init: {', '.join(parts)} (smallest contrast {fmt.number(e['min_contrast'])}); identified data, "
        f"small init recovers r*: {recovery}"
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
