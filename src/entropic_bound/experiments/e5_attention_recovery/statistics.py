"""The numbers behind E5's claim C7, per teacher: which runs fit their data, small init's recovery of r*
on identified data (Wilson over data sets), and the small-minus-large recovery contrast over data sets
on under-identified data that leave room for a bias and single out r* from below, with the decision
their intervals give.

The room filter asks the upper side: the data's own minimum-norm kernel is above ``r* + tol``. The
filter from below asks whether a rank *below* r* already fits the data: a learned run (train loss at
the fit bar) with an estimate below ``r* − tol`` is such a fit, seen. Where one exists in a cell
(teacher, r*, spectrum, V, N), the data do not single out r* and a small-init run that ends below it
has found the lower-rank fit the bias looks for, not failed: the whole cell is set aside (named in the
evidence), so the contrast tests the bias, not identifiability.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.interval_decision import decide_by_interval
from ...stats.unit_intervals import unit_share, units_of
from ..science.implicit_bias import UNIT, bias_contrast, contrast_outcome, data_set_keys, detectable
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
#: one cell of the grid for the filter from below: a lower-rank fit seen on one of its data sets sets it aside
CELL = ["task.r_star", "task.spectrum", "v", "train.n_samples"]


def _min_norm_by_data_set(under: pd.DataFrame, min_norm_col: str) -> dict:
    if not len(under):
        return {}
    first = under.groupby(data_set_keys(under, DATA_SET))[min_norm_col].first()
    return {
        f"r*={k[0]}, {k[1]}, V {k[2]}, N={k[3]}, seed {k[4]}"
        + (f", draw {k[5]}" if len(k) > 5 else ""): round(float(x), 4)
        for k, x in first.items()
    }


def fits_below(fit: pd.DataFrame, col: str, tol: float) -> pd.Series:
    """Runs on cells where a learned run ends below ``r* − tol``: a rank below r* fits those data."""
    low = fit[fit[col] < fit["task.r_star"] - tol]
    cells = pd.MultiIndex.from_frame(fit[CELL]).isin(pd.MultiIndex.from_frame(low[CELL]))
    return pd.Series(cells, index=fit.index, dtype=bool)


def _cells_fit_below(under: pd.DataFrame, below: pd.Series, col: str) -> dict:
    """``{"r*=…, <spectrum>, V …, N=…": lowest learned estimate}`` of the cells set aside from below."""
    if not below.any():
        return {}
    lowest = under[below].groupby(CELL)[col].min()
    return {f"r*={r}, {sp}, V {v}, N={N}": round(float(x), 3) for (r, sp, v, N), x in lowest.items()}


def identified_recovery(cfg, rows: pd.DataFrame, success: pd.Series):
    """Small init's recovery share on identified data over data sets (Wilson) against ``c7_rate``, as an
    interval decision (one bar: a gate that refutes when the whole interval lies below it)."""
    flags = [success.loc[g.index].to_numpy(bool) for g in units_of(rows, data_set_keys(rows, DATA_SET))]
    value, interval, n = unit_share(flags)
    if not n:
        return None
    rate = cfg.verdict.c7_rate
    return decide_by_interval(value, interval, rate, refute_threshold=rate, unit=UNIT, units=n)


def c7_cells(cfg, g: pd.DataFrame, key: str) -> tuple[dict, object, object]:
    """One teacher's numbers (learned runs only): recovery from small init on identified data, and the
    small-minus-large recovery contrast over under-identified data sets whose minimum-norm kernel is above
    r* + tolerance and whose cell no lower rank fits; and both interval decisions (or None)."""
    v = cfg.verdict
    col, min_norm_col, tol = f"K_{key}", f"min_norm_{key}", v.c7_tolerance
    fit = g[learned(cfg, g)]
    ident = identified(fit)
    small, large = fit["init_scale"] <= v.small_init_max, fit["init_scale"] >= v.large_init_min
    room = ~ident & detectable(
        fit.assign(**{min_norm_col: fit[min_norm_col].fillna(-np.inf)}), min_norm_col, tol
    )
    below = ~ident & fits_below(fit, col, tol)
    counted = room & ~below
    small_under, large_under = fit[small & counted], fit[large & counted]
    contrast = bias_contrast(
        small_under,
        large_under,
        recovered(small_under, col, tol),
        recovered(large_under, col, tol),
        DATA_SET,
        v.c7_contrast,
    )
    decision = contrast.pop("decision")
    small_ident = recovered(fit[small & ident], col, tol)
    gate = identified_recovery(cfg, fit[small & ident], small_ident)
    under = fit[~ident]
    return (
        {
            "small_init_identified_recovery": share(small_ident),
            "small_init_identified_recovery_interval": list(gate.interval) if gate is not None else None,
            "identified_data_sets": gate.units if gate is not None else 0,
            "large_init_identified_recovery": share(recovered(fit[large & ident], col, tol)),
            "small_init_under_identified_recovery": share(recovered(small_under, col, tol)),
            "large_init_under_identified_recovery": share(recovered(large_under, col, tol)),
            **contrast,
            "min_norm_rank": _min_norm_by_data_set(under, min_norm_col),
            "data_sets_with_room": int(fit[room].groupby(data_set_keys(fit, DATA_SET)).ngroups)
            if room.any()
            else 0,
            "cells_fit_below": _cells_fit_below(fit, below, col),
            "median_estimate_small_under": float(small_under[col].median()) if len(small_under) else None,
            "median_estimate_large_under": float(large_under[col].median()) if len(large_under) else None,
            "median_rel_excess_identified": float(fit[ident]["rel_excess"].median()) if ident.any() else None,
            "runs": int(len(g)),
            "set_aside_not_learned": int(len(g) - len(fit)),
        },
        decision,
        gate,
    )


def c7_decision(cfg, cells: dict, decision, gate) -> tuple[bool | None, str]:
    """(True / False / None, reason) for one teacher: refuted when small init's identified recovery is
    below c7_rate beyond doubt (Wilson upper end < c7_rate, over data sets); else the contrast's interval
    against its one boundary (above: confirmed, at or below: refuted); else inconclusive, with why."""
    v = cfg.verdict
    if gate is not None and gate.interval[1] < v.c7_rate:
        return (
            False,
            f"small init recovers r* on identified data in {gate.statistic:.0%} of {gate.units} data sets "
            f"(interval below {v.c7_rate:.0%})",
        )
    if not cells["data_sets_with_room"]:
        return (
            None,
            f"nothing to detect: no under-identified data set has a minimum-norm kernel above r* + {v.c7_tolerance:g}",
        )
    if decision is None:
        aside = "; ".join(f"{c} (lowest {x:g})" for c, x in cells["cells_fit_below"].items())
        return None, (
            "nothing to detect: no learned small- and large-init runs on under-identified data with room for "
            "a bias that single out r* from below" + (f" (a rank below r* fits: {aside})" if aside else "")
        )
    return contrast_outcome(decision)
