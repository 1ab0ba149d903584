"""The convergence rule of a trained run: no claim is refuted by a run still improving.

A run is **converged** when its excess (excess risk, or the loss minus its floor) falls by less than
a stated fraction ``tol`` (default 10 %) over the last quarter of training:

    relative_drop = (e_start − e_end) / e_start,   converged ⇔ relative_drop < tol,

where ``e_start`` is the excess at step ``(1 − window)·T`` and ``e_end`` at the last step ``T``.
Trainers record curves at log-spaced checkpoints, so the last quarter often holds one or two points:

- with at least :data:`MIN_ROBUST_POINTS` curve points inside the window (noisy, densely recorded
  curves), ``e_start`` and ``e_end`` are the **medians** of the window's first and last thirds, so
  a single noisy minibatch loss cannot flip the rule;
- otherwise ``e_start`` is interpolated linearly in ``log(step + 1)`` between the checkpoints that
  bracket ``(1 − window)·T`` (the curves are near power laws in the step) and ``e_end`` is the last value.

An excess already at or below zero at the window's start has nothing left to fall: drop 0, converged.

Limitation (measured, tests): a run still in a plateau or escaping a saddle (the loss *accelerating*:
a rank-1 student of a rank-2 operator drops 2–9 % over the last quarter at steps 4–8, then 15–19 %
at steps 10–16) reads as converged; the rule is meant for runs past their first descent.
:func:`classify_runs` turns runs into ``reached_floor`` / ``converged_above_floor`` / ``still_improving``
and says whether a "did not reach the floor" verdict may be drawn from them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import DataError

DEFAULT_TOL = 0.10
DEFAULT_WINDOW = 0.25
MIN_ROBUST_POINTS = 6


def _curve(steps, excess) -> tuple[np.ndarray, np.ndarray]:
    s, e = np.asarray(steps, dtype=float), np.asarray(excess, dtype=float)
    keep = np.isfinite(s) & np.isfinite(e)
    s, e = s[keep], e[keep]
    order = np.argsort(s, kind="stable")
    if len(s) < 2 or s[order][-1] <= s[order][0]:
        raise DataError(
            f"A convergence test needs a curve of at least 2 distinct steps. Got {len(s)} points."
        )
    return s[order], e[order]


def _window_ends(s: np.ndarray, e: np.ndarray, start: float) -> tuple[float, float, str]:
    """``(e_start, e_end, method)`` over the window ``[start, s[-1]]``."""
    inside = s >= start
    if inside.sum() >= MIN_ROBUST_POINTS:
        w = e[inside]
        third = max(len(w) // 3, 1)
        return float(np.median(w[:third])), float(np.median(w[-third:])), "medians of the window's thirds"
    e_start = float(np.interp(np.log1p(start), np.log1p(s), e))
    return e_start, float(e[-1]), "interpolated in log(step + 1)"


def convergence(
    steps: Sequence[float],
    excess: Sequence[float],
    *,
    tol: float = DEFAULT_TOL,
    window: float = DEFAULT_WINDOW,
) -> dict:
    """Whether one run converged: ``{converged, relative_drop, excess_start, excess_end, window_start,
    tol, window, method}`` (see the module docstring for the rule)."""
    if not 0 < tol < 1 or not 0 < window < 1:
        raise DataError(f"tol and window must lie in (0, 1). Got tol={tol!r}, window={window!r}.")
    s, e = _curve(steps, excess)
    start = s[-1] - window * (s[-1] - s[0])
    e_start, e_end, method = _window_ends(s, e, start)
    drop = (e_start - e_end) / e_start if e_start > 0 else 0.0
    return {
        "converged": bool(drop < tol),
        "relative_drop": float(drop),
        "excess_start": e_start,
        "excess_end": e_end,
        "window_start": float(start),
        "tol": tol,
        "window": window,
        "method": method,
    }


def classify_runs(
    runs: Sequence[tuple[Sequence[float], Sequence[float]]],
    *,
    floor: float,
    tol: float = DEFAULT_TOL,
    window: float = DEFAULT_WINDOW,
) -> dict:
    """Classify runs ``[(steps, excess), …]`` against the floor ``floor`` (an excess at or below it
    reached the floor).

    Returns ``{status: [per run], converged: [bool per run], relative_drop: [per run],
    n_reached_floor, n_converged_above_floor, n_still_improving, decidable, reason}``. ``status`` is
    ``"reached_floor"``, ``"converged_above_floor"`` (did not reach the floor and stopped improving:
    evidence that the floor is out of reach) or ``"still_improving"`` (did not reach it yet: no
    evidence either way). ``decidable`` is False when any run is still improving — a verdict that
    reads "did not reach the floor" must then be inconclusive, with ``reason``.
    """
    status, converged, drops = [], [], []
    for steps, excess in runs:
        c = convergence(steps, excess, tol=tol, window=window)
        converged.append(c["converged"])
        drops.append(c["relative_drop"])
        if c["excess_end"] <= floor:
            status.append("reached_floor")
        else:
            status.append("converged_above_floor" if c["converged"] else "still_improving")
    counts = {k: status.count(k) for k in ("reached_floor", "converged_above_floor", "still_improving")}
    improving = counts["still_improving"]
    reason = (
        f"{improving} of {len(status)} runs above the floor are still improving (excess fell by >= {tol:.0%} "
        f"over the last {window:.0%} of training): train longer before reading 'did not reach the floor'"
        if improving
        else ""
    )
    return {
        "status": status,
        "converged": converged,
        "relative_drop": drops,
        "n_reached_floor": counts["reached_floor"],
        "n_converged_above_floor": counts["converged_above_floor"],
        "n_still_improving": improving,
        "decidable": improving == 0,
        "reason": reason,
    }
