"""A verdict decided by an interval, not by a point value on its threshold.

A statistic (a share, a contrast, a correlation) clears its bar only when its whole confidence
interval over the independent unit does: ``confirmed`` when the interval lies beyond the
confirmation threshold, ``refuted`` when it lies beyond the refutation threshold (on the other side),
``inconclusive`` in between. Every claim's evidence carries the :func:`decision` record, and the
report marks a verdict whose interval touches its threshold as narrow.

Intervals for proportions are Wilson score intervals and, for the difference of two independent
proportions, Newcombe's hybrid score interval (Newcombe 1998, "Interval estimation for the
difference between independent proportions", method 10): both keep their coverage at the small
counts the experiments have, where the Wald interval does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .cluster import wilson

__all__ = ["IntervalDecision", "decide_by_interval", "newcombe_difference", "wilson"]


def newcombe_difference(k1: int, n1: int, k2: int, n2: int, level: float = 0.95) -> tuple[float, float]:
    """Newcombe's interval for ``k1/n1 − k2/n2`` (two independent binomial proportions)."""
    if n1 <= 0 or n2 <= 0:
        return (math.nan, math.nan)
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, level)
    l2, u2 = wilson(k2, n2, level)
    d = p1 - p2
    lower = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    upper = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return (max(-1.0, lower), min(1.0, upper))


@dataclass(frozen=True)
class IntervalDecision:
    """What decided a verdict: the statistic, its interval, the thresholds and the margin by which the
    interval clears (positive) or misses (negative) the confirmation threshold."""

    statistic: float
    interval: tuple[float, float]
    threshold: float
    refute_threshold: float
    higher_is_better: bool
    level: float
    unit: str
    units: int | None = None  # how many independent units the interval was taken over
    # each unit's bounded value (and their range) where the statistic is their mean, so that a
    # confidence sequence can read them one at a time (None: the statistic is no such mean)
    unit_values: tuple[float, ...] | None = None
    value_range: tuple[float, float] | None = None

    @property
    def outcome(self) -> bool | None:
        """True (confirmed), False (refuted) or None (the interval straddles a threshold or is undefined)."""
        lo, hi = self.interval
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return None
        if self.higher_is_better:
            return True if lo >= self.threshold else (False if hi <= self.refute_threshold else None)
        return True if hi <= self.threshold else (False if lo >= self.refute_threshold else None)

    @property
    def margin(self) -> float:
        lo, hi = self.interval
        return (lo - self.threshold) if self.higher_is_better else (self.threshold - hi)

    @property
    def narrow(self) -> bool:
        """The point value is past the threshold but the interval reaches it (or the reverse)."""
        lo, hi = self.interval
        return bool(lo <= self.threshold <= hi) or bool(lo <= self.refute_threshold <= hi)

    def to_dict(self) -> dict:
        return {
            "statistic": self.statistic,
            "interval": list(self.interval),
            "threshold": self.threshold,
            "refute_threshold": self.refute_threshold,
            "direction": "higher" if self.higher_is_better else "lower",
            "margin": self.margin,
            "narrow": self.narrow,
            "level": self.level,
            "unit": self.unit,
            "units": self.units,
        } | (
            {"unit_values": list(self.unit_values), "value_range": list(self.value_range)}
            if self.unit_values is not None and self.value_range is not None
            else {}
        )


def decide_by_interval(
    statistic: float,
    interval: tuple[float, float],
    threshold: float,
    *,
    refute_threshold: float | None = None,
    higher_is_better: bool = True,
    level: float = 0.95,
    unit: str = "run",
    units: int | None = None,
    unit_values: tuple[float, ...] | None = None,
    value_range: tuple[float, float] | None = None,
) -> IntervalDecision:
    """The :class:`IntervalDecision` of ``statistic`` with ``interval`` against ``threshold``.

    ``refute_threshold`` (default: ``threshold``) is the bar on the other side: with
    ``higher_is_better`` the claim is refuted when the whole interval lies at or below it. A
    two-sided claim with a gap between the bars (e.g. confirmed above 0.5, refuted at or below 0)
    is inconclusive when the interval ends in the gap. ``units`` counts the independent units the
    interval was taken over (what a power calculation scales); ``unit_values`` and ``value_range`` carry
    each unit's bounded value where a sequential look reads them.
    """
    refute = threshold if refute_threshold is None else refute_threshold
    lo, hi = (float(interval[0]), float(interval[1]))
    return IntervalDecision(
        float(statistic),
        (lo, hi),
        float(threshold),
        float(refute),
        higher_is_better,
        level,
        unit,
        units,
        None if unit_values is None else tuple(float(x) for x in unit_values),
        value_range,
    )
