"""The implicit-bias contrast shared by C3 (E2) and C7 (E5): small against large init where the data
alone leave room for a bias.

An implicit bias is GD's choice among the operators that fit the data. The data alone already force
an answer: the minimum-norm interpolant of the same data set. Only where that answer's rank is above
``r* + tolerance`` is there something for a bias to do, so only runs on such data sets are counted.
A run succeeds when its estimate is two-sided close to ``r*`` (``|estimate − r*| <= tolerance``: an
estimate *below* r* is no recovery). The small-minus-large difference of success shares is decided
by Newcombe's interval over runs (one trained model per teacher draw, data set and init): confirmed
when its lower end reaches the contrast threshold, refuted when its upper end is at or below 0.

Both claims read their init groups from :data:`SMALL_INIT_MAX` and :data:`LARGE_INIT_MIN`, so an
init scale cannot count as large in one claim and be dropped in the other.
"""

from __future__ import annotations

import pandas as pd

from ...stats.interval_decision import decide_by_interval, newcombe_difference
from .names import LARGE_INIT_MIN, SMALL_INIT_MAX  # noqa: F401  (the claims' init groups)

UNIT = "run (one trained model per teacher draw, data set and init scale)"


def detectable(g: pd.DataFrame, min_norm_col: str, tol: float) -> pd.Series:
    """Runs whose data set's minimum-norm interpolant is above ``r* + tol``: there a bias can show."""
    return g[min_norm_col] > g["task.r_star"] + tol


def bias_contrast(
    small: pd.DataFrame,
    large: pd.DataFrame,
    success_small: pd.Series,
    success_large: pd.Series,
    threshold: float,
) -> dict:
    """Counts, shares, Newcombe's interval and the interval decision of ``share(small) − share(large)``.

    ``small``/``large``: the counted runs of each group; ``success_*``: boolean Series over them."""
    k1, n1, k2, n2 = int(success_small.sum()), len(small), int(success_large.sum()), len(large)
    out = {"success_small": k1, "runs_small": n1, "success_large": k2, "runs_large": n2}
    if not n1 or not n2:
        return {**out, "contrast": None, "decision": None}
    diff = k1 / n1 - k2 / n2
    decision = decide_by_interval(
        diff, newcombe_difference(k1, n1, k2, n2), threshold, refute_threshold=0.0, unit=UNIT
    )
    return {**out, "contrast": diff, "decision": decision}


def contrast_outcome(decision, bar: float) -> tuple[bool | None, str]:
    """``(outcome, reason)`` of the contrast's interval decision: the reason says, when its interval
    reaches neither ``bar`` nor 0, where it lies."""
    if decision.outcome is None:
        lo, hi = decision.interval
        return (
            None,
            f"contrast {decision.statistic:.2f}, interval [{lo:.2f}, {hi:.2f}] reaches neither {bar:g} nor 0",
        )
    return decision.outcome, ""
