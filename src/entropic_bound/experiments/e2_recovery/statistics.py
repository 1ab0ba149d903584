"""The numbers behind E2's claim C3: which runs fit their data, which recover r*, and the
small-minus-large recovery contrast over data sets on under-identified data with room for a bias (the
identified data as the control), with the decision its interval gives.

A run recovers when its *final* rank is r* (the paper's statement is about the solution GD converges
to). A transient (r* reached, then left upward while the loss fell into the noise floor) is no
recovery; transients are counted and reported beside the verdict, with the contrast they would give."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..science.implicit_bias import bias_contrast, contrast_outcome, data_set_keys, detectable
from .recovery import status_counts


def learned(cfg, rows: pd.DataFrame) -> pd.Series:
    """Runs that fit their data (train loss <= c3_fit·max(σ², 1e-4)): an unfitted model says nothing about rank."""
    return rows["train_loss"] <= cfg.verdict.c3_fit * np.maximum(rows["task.sigma"] ** 2, 1e-4)


def share(mask: pd.Series) -> float | None:
    return float(mask.mean()) if len(mask) else None


def recovered(g: pd.DataFrame, col: str, tol: float) -> pd.Series:
    """Two-sided, on the final estimate: |estimate − r*| <= tol (a transient is no recovery)."""
    return (g[col] - g["task.r_star"]).abs() <= tol


def transient(g: pd.DataFrame) -> pd.Series:
    """Runs whose rank was r* during training and ended above it (reported, not counted)."""
    return g["status_rank"] == "transient"


def c3_cells(cfg, fit: pd.DataFrame, col: str, min_norm_col: str) -> tuple[dict, object]:
    """The numbers of the decision (learned GD runs on under-identified data whose minimum-norm
    interpolant is above r* + tol, over data sets) and of the identified control; and the interval
    decision (or None)."""
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
    small_under, large_under = groups["small_under"], groups["large_under"]
    success = {k: recovered(g, col, tol) for k, g in groups.items()}
    contrast = bias_contrast(
        small_under,
        large_under,
        success["small_under"],
        success["large_under"],
        DATA_SET,
        cfg.verdict.c3_contrast,
    )
    decision = contrast.pop("decision")
    by_data_set = _min_norm_by_data_set(under, min_norm_col)
    with_room = under[detectable(under, min_norm_col, tol)]
    return {
        "small_init_under_identified_recovery": share(success["small_under"]),
        "large_init_under_identified_recovery": share(success["large_under"]),
        **contrast,
        **_transients(cfg, small_under, large_under, success),
        "small_init_identified_recovery": share(success["small_identified"]),
        "large_init_identified_recovery": share(success["large_identified"]),
        "min_norm_rank": by_data_set,
        "under_identified_data_sets": len(by_data_set),
        "data_sets_with_room": int(with_room.groupby(data_set_keys(under, DATA_SET)).ngroups)
        if len(under)
        else 0,
        "runs": {k: int(len(g)) for k, g in groups.items()},
        "status_counts": {k: status_counts(g) for k, g in groups.items()},
        "median_estimate": {k: float(g[col].median()) if len(g) else None for k, g in groups.items()},
    }, decision


def _transients(cfg, small_under: pd.DataFrame, large_under: pd.DataFrame, success: dict) -> dict:
    """How many counted runs are transients, and the contrast they would give if they counted."""
    counted = bias_contrast(
        small_under,
        large_under,
        success["small_under"] | transient(small_under),
        success["large_under"] | transient(large_under),
        DATA_SET,
        cfg.verdict.c3_contrast,
    )
    return {
        "transients": {
            "small": int(transient(small_under).sum()),
            "large": int(transient(large_under).sum()),
        },
        "contrast_counting_transients": counted["contrast"],
    }


DATA_SET = ["task.r_star", "task.spectrum", "train.n_samples", "seed"]


def _min_norm_by_data_set(under: pd.DataFrame, min_norm_col: str) -> dict:
    """``{"r*=…, <spectrum>, N=…, seed … [, draw …]": min-norm rank}`` of every under-identified data set."""
    if not len(under):
        return {}
    first = under.groupby(data_set_keys(under, DATA_SET))[min_norm_col].first()
    return {
        f"r*={k[0]}, {k[1]}, N={k[2]}, seed {k[3]}" + (f", draw {k[4]}" if len(k) > 4 else ""): round(
            float(v), 4
        )
        for k, v in first.items()
    }


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
    return contrast_outcome(decision)
