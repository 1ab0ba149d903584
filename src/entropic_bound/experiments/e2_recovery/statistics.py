"""The numbers behind E2's claim C3: which runs fit their data, which recover r*, and the
small-minus-large recovery contrast on under-identified data with room for a bias (the identified
data as the control), with the decision its interval gives."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..science.implicit_bias import bias_contrast, contrast_outcome, detectable
from .recovery import status_counts


def learned(cfg, rows: pd.DataFrame) -> pd.Series:
    """Runs that fit their data (train loss <= c3_fit·max(σ², 1e-4)): an unfitted model says nothing about rank."""
    return rows["train_loss"] <= cfg.verdict.c3_fit * np.maximum(rows["task.sigma"] ** 2, 1e-4)


def share(mask: pd.Series) -> float | None:
    return float(mask.mean()) if len(mask) else None


def recovered(g: pd.DataFrame, col: str, tol: float) -> pd.Series:
    """Two-sided: |estimate − r*| <= tol, or a transient (rank was r*, rose late by fitting noise)."""
    return ((g[col] - g["task.r_star"]).abs() <= tol) | (g["status_rank"] == "transient")


def c3_cells(cfg, fit: pd.DataFrame, col: str, min_norm_col: str) -> tuple[dict, object]:
    """The numbers of the decision (learned GD runs on under-identified data whose minimum-norm
    interpolant is above r* + tol) and of the identified control; and the interval decision (or None)."""
    tol = cfg.verdict.c3_tolerance
    small = fit["init_scale"] <= cfg.verdict.small_init_max
    large = fit["init_scale"] >= cfg.verdict.large_init_min
    ident = fit["identified"] > 0.5
    room = detectable(fit, min_norm_col, tol) & ~ident
    groups = {
        "small_under": fit[small & room],
        "large_under": fit[large & room],
        "small_identified": fit[small & ident],
        "large_identified": fit[large & ident],
    }
    under = fit[~ident]
    contrast = bias_contrast(
        groups["small_under"],
        groups["large_under"],
        recovered(groups["small_under"], col, tol),
        recovered(groups["large_under"], col, tol),
        cfg.verdict.c3_contrast,
    )
    decision = contrast.pop("decision")
    return {
        "small_init_under_identified_recovery": share(recovered(groups["small_under"], col, tol)),
        "large_init_under_identified_recovery": share(recovered(groups["large_under"], col, tol)),
        **contrast,
        "small_init_identified_recovery": share(recovered(groups["small_identified"], col, tol)),
        "large_init_identified_recovery": share(recovered(groups["large_identified"], col, tol)),
        "min_norm_rank": _min_norm_by_data_set(under, min_norm_col),
        "under_identified_data_sets": int(len(_min_norm_by_data_set(under, min_norm_col))),
        "data_sets_with_room": int(under[detectable(under, min_norm_col, tol)].groupby(DATA_SET).ngroups)
        if len(under)
        else 0,
        "runs": {k: int(len(g)) for k, g in groups.items()},
        "status_counts": {k: status_counts(g) for k, g in groups.items()},
        "median_estimate": {k: float(g[col].median()) if len(g) else None for k, g in groups.items()},
    }, decision


DATA_SET = ["task.r_star", "task.spectrum", "train.n_samples", "seed"]


def _min_norm_by_data_set(under: pd.DataFrame, min_norm_col: str) -> dict:
    """``{"r*=…, <spectrum>, N=…, seed …": min-norm rank}`` of every under-identified data set."""
    if not len(under):
        return {}
    first = under.groupby(DATA_SET)[min_norm_col].first()
    return {f"r*={r}, {sp}, N={N}, seed {s}": round(float(v), 4) for (r, sp, N, s), v in first.items()}


def c3_decision(cfg, cells: dict, decision) -> tuple[bool | None, str]:
    """(True / False / None, reason): Newcombe's interval of the small-minus-large recovery shares."""
    v, runs = cfg.verdict, cells["runs"]
    if not cells["data_sets_with_room"]:
        ranks = ", ".join(f"{x:g}" for x in cells["min_norm_rank"].values()) or "none"
        return None, (
            f"nothing to detect: no under-identified data set has a minimum-norm interpolant above r* + "
            f"{v.c3_tolerance:g} (min_norm_rank {ranks})"
        )
    if min(runs["small_under"], runs["large_under"]) < v.c3_min_runs:
        return None, (
            f"too few learned GD runs on under-identified data with room for a bias: small init "
            f"{runs['small_under']}, large init {runs['large_under']}; {v.c3_min_runs} each needed"
        )
    return contrast_outcome(decision, v.c3_contrast)
