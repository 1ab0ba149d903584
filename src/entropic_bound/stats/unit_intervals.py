"""Intervals over the independent unit (a teacher draw, a student seed), and claims with several
conditions decided by the condition that decides.

Runs of one teacher are not independent draws (they share the teacher, and often its data), so:

- a **share** is counted on units: each unit contributes the fraction of its runs with the property,
  the statistic is the mean of those fractions and its interval the Wilson interval of that (possibly
  fractional) count over the number of units (:func:`unit_share`). With one run per unit it is the
  ordinary Wilson interval; with many it is never narrower than the units allow.
- a **median or ratio** gets a seeded percentile bootstrap that resamples units with replacement, within
  strata when the design fixes some factor (e.g. one teacher per r*), and recomputes the statistic on
  every draw (:func:`unit_bootstrap`); the same seed gives the same interval.

:func:`all_of` turns the decisions of a claim's conditions ("every condition holds") into one: refuted
when any condition is refuted, confirmed when all are, and the decisive condition is the refuted one, or
else the one with the smallest margin.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np
import pandas as pd

from .cluster import wilson
from .interval_decision import IntervalDecision, decide_by_interval
from .rank_tests import percentile_interval

__all__ = ["N_BOOT", "all_of", "record", "unit_bootstrap", "unit_share", "unit_share_decision", "units_of"]

#: Bootstrap draws of every unit interval (seeded: the interval is a function of the rows).
N_BOOT = 1000


def units_of(rows: pd.DataFrame, keys: Sequence[str]) -> list[pd.DataFrame]:
    """The rows of each unit (the distinct values of ``keys``), in sorted key order."""
    if not len(rows):
        return []
    return [g for _, g in rows.groupby(list(keys), sort=True)]


def unit_share(
    flags_by_unit: Sequence[Sequence[bool]], level: float = 0.95
) -> tuple[float, tuple[float, float], int]:
    """``(share, Wilson interval, units)``: the mean over units of each unit's flagged fraction."""
    fractions = [float(np.mean(f)) for f in flags_by_unit if len(f)]
    if not fractions:
        return float("nan"), (float("nan"), float("nan")), 0
    n = len(fractions)
    return float(np.mean(fractions)), wilson(float(np.sum(fractions)), n, level), n


def unit_share_decision(
    rows: pd.DataFrame,
    flag: pd.Series,
    keys: Sequence[str],
    threshold: float,
    *,
    refute_threshold: float | None = None,
    unit: str = "teacher draw",
) -> IntervalDecision:
    """The share of ``flag`` over the units of ``rows`` (``keys``) against ``threshold`` (higher is better)."""
    flags = [flag.loc[g.index].to_numpy(bool) for g in units_of(rows, keys)]
    share, interval, n = unit_share(flags)
    return decide_by_interval(
        share, interval, threshold, refute_threshold=refute_threshold, unit=unit, units=n
    )


def unit_bootstrap(
    units: Sequence,
    statistic: Callable[[np.ndarray], float],
    *,
    strata: Sequence[Hashable] | None = None,
    n_boot: int = N_BOOT,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, tuple[float, float]]:
    """``(statistic(all units), percentile interval)``, units resampled with replacement within each
    stratum. ``statistic`` takes an index array into ``units`` (a unit drawn twice appears twice)."""
    n = len(units)
    if not n:
        return float("nan"), (float("nan"), float("nan"))
    labels = np.asarray(list(strata) if strata is not None else [0] * n, dtype=object)
    groups = [np.flatnonzero(labels == s) for s in dict.fromkeys(labels.tolist())]
    rng = np.random.default_rng(seed)
    picks = np.concatenate([g[rng.integers(0, len(g), (n_boot, len(g)))] for g in groups], axis=1)
    boots = np.array([statistic(row) for row in picks], dtype=float)
    return float(statistic(np.arange(n))), percentile_interval(boots, level)


def all_of(decisions: dict[str, IntervalDecision]) -> tuple[bool | None, str | None]:
    """``(outcome, decisive name)`` of a claim that needs every condition in ``decisions``."""
    if not decisions:
        return None, None
    refuted = [k for k, d in decisions.items() if d.outcome is False]
    if refuted:
        return False, min(refuted, key=lambda k: decisions[k].margin)
    decisive = min(
        decisions, key=lambda k: decisions[k].margin if np.isfinite(decisions[k].margin) else -np.inf
    )
    outcome = True if all(d.outcome is True for d in decisions.values()) else None
    return outcome, decisive


def record(evidence: dict, decisions: dict[str, IntervalDecision]) -> bool | None:
    """Write ``decision`` (the decisive condition's) and ``decisions`` (all) into ``evidence``; the outcome."""
    outcome, decisive = all_of(decisions)
    if decisive is not None:
        evidence["decision"] = {"condition": decisive, **decisions[decisive].to_dict()}
        if len(decisions) > 1:
            evidence["decisions"] = {k: d.to_dict() for k, d in decisions.items()}
    return outcome
