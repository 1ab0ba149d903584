"""The implicit-bias contrast shared by C3 (E2) and C7 (E5): small against large init where the data
alone leave room for a bias.

An implicit bias is GD's choice among the operators that fit the data. The data alone already force
an answer: the minimum-norm interpolant of the same data set. Only where that answer's rank is above
``r* + tolerance`` is there something for a bias to do, so only runs on such data sets are counted.
A run succeeds when its estimate is two-sided close to ``r*`` (``|estimate − r*| <= tolerance``: an
estimate *below* r* is no recovery).

**The unit is the data set.** The runs of every init scale trained on one data set share its inputs,
noise and teacher, so they are one unit, not several: each init group's share is the mean over data
sets of the fraction of that data set's runs that recover, its interval the Wilson interval of that
(possibly fractional) count over the data sets (never narrower than the data sets allow), and the
small-minus-large difference is decided by Newcombe's interval built from them. Data sets of different
draws are different units (``draw`` is a key).

**One boundary.** The paper states a direction (small init concentrates at r*, large init need not),
not a size, so the boundary is 0 unless a config sets another: confirmed when the whole interval lies
above it, refuted when the whole interval lies at or below it. Every contrast off the boundary is
decided by enough data sets.

Both claims read their init groups from :data:`SMALL_INIT_MAX` and :data:`LARGE_INIT_MIN`, so an
init scale cannot count as large in one claim and be dropped in the other.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ...stats.interval_decision import decide_by_interval, newcombe_difference
from ..framework.draws import Seeds
from .names import LARGE_INIT_MIN, SMALL_INIT_MAX  # noqa: F401  (the claims' init groups)

UNIT = "data set (the runs of every init scale trained on one data set of one draw)"


def data_set_keys(rows: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """``keys`` plus ``draw`` where the rows carry it: a seed index names a data set within one draw only."""
    return [*keys, "draw"] if "draw" in rows.columns else list(keys)


def groups_of_rows(experiment, rows: pd.DataFrame, seeds: Seeds) -> list[list]:
    """The run groups behind ``rows`` (members share a data set), of every draw they hold, each draw
    grouped apart: a pooled decision holds several draws, and a data set must be regenerated from its
    own draw's seeds. Rows without a ``draw`` column are ``seeds``'s draw."""
    draws = sorted({int(d) for d in rows["draw"]}) if "draw" in rows.columns else [seeds.draw]
    ids = set(rows["run_id"])
    specs = [
        [s for s in experiment.drawn_specs(Seeds(seeds.experiment, d)) if s.run_id in ids] for d in draws
    ]
    return [group for drawn in specs for group in experiment.groups(drawn)]


def detectable(g: pd.DataFrame, min_norm_col: str, tol: float) -> pd.Series:
    """Runs whose data set's minimum-norm interpolant is above ``r* + tol``: there a bias can show."""
    return g[min_norm_col] > g["task.r_star"] + tol


def _data_set_fractions(rows: pd.DataFrame, success: pd.Series, keys: list[str]) -> pd.Series:
    """Per data set (indexed by ``keys``, in sorted key order): the fraction of its runs that succeed."""
    if not len(rows):
        return pd.Series(dtype=float)
    return rows.assign(ok=success.astype(float)).groupby(keys, sort=True)["ok"].mean()


def _data_set_share(rows: pd.DataFrame, success: pd.Series, keys: list[str]) -> tuple[float, int, int]:
    """``(summed per-data-set fractions, data sets, runs)`` of one init group."""
    fractions = _data_set_fractions(rows, success, keys)
    return float(sum(fractions.tolist())), len(fractions), len(rows)


def paired_differences(
    small: pd.DataFrame,
    large: pd.DataFrame,
    success_small: pd.Series,
    success_large: pd.Series,
    keys: list[str],
) -> list[float]:
    """Per data set holding runs of both groups, in the order of its keys: the fraction of its small-init
    runs that recover minus that of its large-init runs (each in [-1, 1]; their mean is the contrast
    over paired data sets, what a confidence sequence reads one data set at a time)."""
    paired = pd.concat(
        {
            "small": _data_set_fractions(small, success_small, keys),
            "large": _data_set_fractions(large, success_large, keys),
        },
        axis=1,
        join="inner",
    )
    return (paired["small"] - paired["large"]).astype(float).tolist()


def bias_contrast(
    small: pd.DataFrame,
    large: pd.DataFrame,
    success_small: pd.Series,
    success_large: pd.Series,
    keys: Sequence[str],
    boundary: float,
) -> dict:
    """Counts, shares over data sets, Newcombe's interval and the interval decision of
    ``share(small) − share(large)`` against ``boundary`` (one bar both ways).

    ``small``/``large``: the counted runs of each group; ``success_*``: boolean Series over them;
    ``keys``: the columns naming a data set (:func:`data_set_keys`)."""
    keys = data_set_keys(small if len(small) else large, keys)
    k1, n1, runs1 = _data_set_share(small, success_small, keys)
    k2, n2, runs2 = _data_set_share(large, success_large, keys)
    out = {
        "unit": "data set",
        "success_small": int(success_small.sum()),
        "runs_small": runs1,
        "data_sets_small": n1,
        "success_large": int(success_large.sum()),
        "runs_large": runs2,
        "data_sets_large": n2,
    }
    if not n1 or not n2:
        return {**out, "data_sets": 0, "contrast": None, "decision": None}
    units = pd.concat([small[keys], large[keys]]).drop_duplicates()
    diff = k1 / n1 - k2 / n2
    decision = decide_by_interval(
        diff,
        newcombe_difference(k1, n1, k2, n2),
        boundary,
        refute_threshold=boundary,
        unit=UNIT,
        units=len(units),
        unit_values=tuple(paired_differences(small, large, success_small, success_large, keys)),
        value_range=(-1.0, 1.0),
    )
    return {**out, "data_sets": len(units), "contrast": diff, "decision": decision}


def contrast_outcome(decision) -> tuple[bool | None, str]:
    """``(outcome, reason)`` of the contrast's interval decision: the reason says, when its interval
    holds the boundary, where it lies and how many data sets it was taken over."""
    if decision.outcome is None:
        lo, hi = decision.interval
        return (
            None,
            f"contrast {decision.statistic:.2f}, interval [{lo:.2f}, {hi:.2f}] over {decision.units} data sets "
            f"holds the boundary {decision.threshold:g}: more data sets are needed",
        )
    return decision.outcome, ""
