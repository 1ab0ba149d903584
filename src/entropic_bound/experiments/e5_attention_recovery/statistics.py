"""The numbers behind E5's claim C7, per teacher: which runs fit their data, small init's recovery of r*
on identified data (Wilson), and the small-minus-large recovery contrast on under-identified data with
room for a bias, with the decision their intervals give."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.cluster import wilson
from ..science.implicit_bias import bias_contrast, contrast_outcome, detectable
from .analysis import identified


def recovered(g: pd.DataFrame, col: str, tol: float) -> pd.Series:
    """Two-sided: |estimate − r*| <= tol (an estimate below r* is no recovery)."""
    return (g[col] - g["task.r_star"]).abs() <= tol


def share(mask: pd.Series) -> float | None:
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
        recovered(small_under, col, tol),
        recovered(large_under, col, tol),
        v.c7_contrast,
    )
    decision = contrast.pop("decision")
    small_ident = recovered(fit[small & ident], col, tol)
    under = fit[~ident]
    return {
        "small_init_identified_recovery": share(small_ident),
        "small_init_identified_recovery_interval": list(wilson(int(small_ident.sum()), len(small_ident)))
        if len(small_ident)
        else None,
        "large_init_identified_recovery": share(recovered(fit[large & ident], col, tol)),
        "small_init_under_identified_recovery": share(recovered(small_under, col, tol)),
        "large_init_under_identified_recovery": share(recovered(large_under, col, tol)),
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
