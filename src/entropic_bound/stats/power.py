"""How many independent units a statistic needs before its interval clears its boundary.

A verdict is decided when the interval of its statistic lies wholly on one side of the claim's
boundary. Whether more data can ever decide it, and how much, follows from the interval method:

- **Wilson** (a share over units): the smallest ``n`` at which the Wilson interval of the observed share
  ``p`` (``p·n`` successes of ``n``) excludes the boundary. Exact, by search over ``n``: the Wilson
  interval of a fixed share narrows monotonically with ``n``.
- **Newcombe** (a difference of two shares, both arms growing in proportion): the smallest number of
  units in the first arm at which Newcombe's interval of the observed difference excludes the boundary.
- **Scaled** (a bootstrap or cluster interval of a mean, median or contrast): an interval that narrows as
  ``1 / sqrt(n)``; the half-width facing the boundary, ``h`` at ``n_now`` units, reaches the distance
  ``|statistic − boundary|`` at ``n = n_now · (h / distance)²``.
- **Fisher** (a correlation): the smallest ``n`` at which the Fisher-z interval of the observed ρ
  (variance factor 1.06, as :func:`~.rank_tests.fisher_interval`) excludes the boundary.

Each answer is "the units needed at the observed effect": if the statistic stayed where it is, this many
units would decide it. A statistic exactly on its boundary is never decided (``None``), and every other
one is, at some finite ``n``: that is the property no criterion may lose.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .cluster import wilson
from .interval_decision import newcombe_difference
from .rank_tests import fisher_interval

#: interval methods whose units can be planned; a claim's decision rule names one of them
METHODS = ("wilson", "newcombe", "scaled", "fisher")

#: the search stops here: a statistic this close to its boundary is reported as needing more
N_MAX = 10**7


@dataclass(frozen=True)
class Power:
    """Units now and units needed at the observed effect (``None``: on the boundary, no ``n`` decides)."""

    method: str
    unit: str
    units_now: int
    units_needed: int | None
    statistic: float
    boundary: float

    @property
    def more_units(self) -> int | None:
        """Units still to add (0 when the interval already clears)."""
        return None if self.units_needed is None else max(0, self.units_needed - self.units_now)

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "unit": self.unit,
            "units_now": self.units_now,
            "units_needed": self.units_needed,
            "more_units": self.more_units,
            "statistic": self.statistic,
            "boundary": self.boundary,
        }


def _excludes(interval: tuple[float, float], boundary: float, above: bool) -> bool:
    lo, hi = interval
    return lo > boundary if above else hi < boundary


def smallest_n(clears: Callable[[int], bool], start: int = 1) -> int | None:
    """The smallest ``n ≥ start`` with ``clears(n)``, for a ``clears`` that stays true once true
    (doubling, then bisection); None when not even :data:`N_MAX` clears."""
    if clears(start):
        return start
    lo, hi = start, start * 2
    while not clears(hi):
        if hi >= N_MAX:
            return None
        lo, hi = hi, min(hi * 2, N_MAX)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if clears(mid) else (mid, hi)
    return hi


def wilson_units(share: float, boundary: float, level: float = 0.95) -> int | None:
    """Units at which the Wilson interval of ``share`` excludes ``boundary``."""
    if not math.isfinite(share) or share == boundary:
        return None
    above = share > boundary
    return smallest_n(lambda n: _excludes(wilson(share * n, n, level), boundary, above))


def newcombe_units(
    p1: float, p2: float, boundary: float, ratio: float = 1.0, level: float = 0.95
) -> int | None:
    """Units of the first arm (the second has ``ratio`` times as many) at which Newcombe's interval
    of ``p1 − p2`` excludes ``boundary``."""
    diff = p1 - p2
    if not (math.isfinite(diff) and math.isfinite(ratio)) or diff == boundary or ratio <= 0:
        return None
    above = diff > boundary

    def clears(n: int) -> bool:
        m = max(1, round(n * ratio))
        return _excludes(newcombe_difference(p1 * n, n, p2 * m, m, level), boundary, above)

    return smallest_n(clears)


def scaled_units(
    statistic: float, interval: tuple[float, float], units_now: int, boundary: float
) -> int | None:
    """Units at which an interval that narrows as ``1/sqrt(n)`` excludes ``boundary`` (the half-width
    facing the boundary scaled from ``units_now``)."""
    lo, hi = interval
    if units_now < 1 or not all(map(math.isfinite, (statistic, lo, hi))) or statistic == boundary:
        return None
    half = (statistic - lo) if statistic > boundary else (hi - statistic)
    distance = abs(statistic - boundary)
    if half <= 0:
        return units_now if _excludes(interval, boundary, statistic > boundary) else None
    needed = units_now * (half / distance) ** 2
    return min(N_MAX, max(1, math.floor(needed) + 1))


def fisher_units(rho: float, boundary: float = 0.0, level: float = 0.95) -> int | None:
    """Points at which the Fisher-z interval of ``rho`` excludes ``boundary``."""
    if not math.isfinite(rho) or rho == boundary or abs(rho) >= 1:
        return None
    above = rho > boundary
    return smallest_n(lambda n: _excludes(fisher_interval(rho, n, level), boundary, above), start=4)


def plan(
    method: str,
    *,
    statistic: float,
    boundary: float,
    units_now: int,
    unit: str,
    interval: tuple[float, float] = (math.nan, math.nan),
    shares: tuple[float, float] | None = None,
    ratio: float = 1.0,
    level: float = 0.95,
) -> Power:
    """The :class:`Power` of one decided statistic under its interval ``method`` (:data:`METHODS`).

    ``shares`` are the two arms' shares for ``newcombe`` (``statistic`` is their difference) and
    ``ratio`` the second arm's size over the first's; ``interval`` is the current one for ``scaled``.
    """
    if method == "wilson":
        needed = wilson_units(statistic, boundary, level)
    elif method == "newcombe":
        assert shares is not None, "newcombe needs the two arms' shares"
        needed = newcombe_units(shares[0], shares[1], boundary, ratio, level)
    elif method == "scaled":
        needed = scaled_units(statistic, interval, units_now, boundary)
    elif method == "fisher":
        needed = fisher_units(statistic, boundary, level)
    else:
        raise ValueError(f"Unknown interval method {method!r}. Available: {', '.join(METHODS)}.")
    return Power(method, unit, int(units_now), needed, float(statistic), float(boundary))
