"""Anytime-valid confidence sequences for the mean of per-unit values in [0, 1].

A fixed-sample interval (Wilson) covers the true share at one pre-chosen sample size. Looked at
again after every new batch of units, and stopped as soon as it clears a bar, it errs far more often
than its level. A confidence sequence covers the mean at every sample size at once, so it may be looked
at after every unit and stopped whenever it clears: ``P(∃t: μ ∉ C_t) ≤ α``.

This is the hedged-capital betting confidence sequence of Waudby-Smith & Ramdas (2024, "Estimating
means of bounded random variables by betting", JRSS-B, Theorem 3 and Section 5.1). For each candidate
mean ``m`` two gamblers bet on the units in arrival order,

    K⁺_t(m) = ∏_{i≤t} (1 + λ⁺_i (x_i − m)),      K⁻_t(m) = ∏_{i≤t} (1 − λ⁻_i (x_i − m)),

with predictable bets λ_i (the plug-in empirical-Bernstein bets: a regularised running variance of
the units before ``i``, at level α/2) truncated at ½/m and ½/(1 − m). Under mean ``m`` both are
non-negative martingales, so by Ville's inequality ``max(½K⁺, ½K⁻)`` reaches 1/α with probability at
most α, ever; ``C_t`` is every ``m`` on a grid not yet rejected, widened to the neighbouring rejected
grid points, and intersected over time. Each gambler alone is an **e-process**: ``K⁺_t(bar)`` is
evidence against "the mean is at or below ``bar``" valid at any stopping time (:func:`e_value`).

Packages considered (``pip download`` from PyPI on Python 3.11):

- ``confseq`` 0.0.11 (Howard & Waudby-Smith; has ``betting.hedged_cs``): only a source release, whose
  C++ extension needs the Boost headers (its build fails here: ``Boost_INCLUDE_DIR-NOTFOUND``); it
  pins ``pybind11~=2.6`` and lists pytest, matplotlib and multiprocess as run-time dependencies;
  its last release is from 2021. Rejected. This module follows its ``hedged_cs`` defaults
  (θ = ½, truncation ½, prior mean ½, prior variance ¼, one pseudo-observation).
- ``expectation``: its current releases (0.6.x) require Python ≥ 3.12 (this project supports 3.10),
  the only other release is 0.0.2. Rejected.

The implementation is checked by simulation (tests/unit/test_confidence_sequence.py): coverage over
sequences stopped at the first of many looks, against a Wilson interval that fails the same test.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bets", "capital", "confidence_sequence", "e_value", "grid_with"]

#: the hedged CS's weight between the two gamblers, and the share of 1/m (1/(1-m)) a bet may reach
THETA, TRUNCATION = 0.5, 0.5


def bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """Predictable plug-in empirical-Bernstein bets λ_t (…, T) of units ``x`` (…, T): λ_t uses only
    ``x[..., :t-1]`` (a regularised running mean and variance, one pseudo-unit at ½ with variance ¼)."""
    t = np.arange(1, x.shape[-1] + 1)  # (T,)
    mean = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)  # (…, T)
    var = (0.25 + np.cumsum((x - mean) ** 2, axis=-1)) / (t + 1)  # (…, T)
    var_before = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), var[..., :-1]], axis=-1)
    return np.sqrt(2 * np.log(1 / alpha) / (t * np.log1p(t) * var_before))


def capital(x: np.ndarray, m: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """``(log K⁺, log K⁻)`` (…, M, T): both gamblers' log wealth for each candidate mean ``m`` (M,)."""
    lam = bets(x, alpha * THETA)[..., None, :]  # (…, 1, T)
    m = np.asarray(m, dtype=float)[:, None]  # (M, 1)
    dx = x[..., None, :] - m  # (…, M, T)
    up = np.minimum(lam, TRUNCATION / m)
    down = np.minimum(lam, TRUNCATION / (1 - m))
    return np.cumsum(np.log1p(up * dx), axis=-1), np.cumsum(np.log1p(-down * dx), axis=-1)


def grid_with(points=(), breaks: int = 400) -> np.ndarray:
    """Candidate means: ``breaks`` evenly inside (0, 1) plus ``points`` (the bars, so that whether a
    bar is rejected is exact, not up to the grid's step)."""
    inner = (np.arange(breaks) + 0.5) / breaks
    extra = [float(p) for p in points if 0 < float(p) < 1]
    return np.unique(np.concatenate([inner, extra]))


def confidence_sequence(
    x: np.ndarray, alpha: float = 0.05, grid: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` (…, T): the level-(1 − α) hedged betting confidence sequence of the mean of
    ``x`` (…, T) in [0, 1] after each unit, intersected over time."""
    x = np.asarray(x, dtype=float)
    assert np.all((x >= 0) & (x <= 1)), "units must lie in [0, 1]"
    grid = grid_with() if grid is None else np.asarray(grid, dtype=float)
    log_up, log_down = capital(x, grid, alpha)  # (…, M, T)
    bound = np.log(1 / (alpha * THETA))  # max(θK⁺, (1−θ)K⁻) ≥ 1/α, θ = ½
    alive = (log_up < bound) & (log_down < bound)  # (…, M, T)
    edges = np.concatenate([[0.0], grid, [1.0]])  # a rejected neighbour, or the end of [0, 1]
    first = np.argmax(alive, axis=-2)  # (…, T)
    last = alive.shape[-2] - 1 - np.argmax(alive[..., ::-1, :], axis=-2)
    lower = np.where(alive.any(axis=-2), edges[first], 0.0)  # edges[i] is grid[i - 1]
    upper = np.where(alive.any(axis=-2), edges[last + 2], 1.0)
    return np.maximum.accumulate(lower, axis=-1), np.minimum.accumulate(upper, axis=-1)


def e_value(x: np.ndarray, bar: float, alpha: float = 0.05, above: bool = True) -> float:
    """The e-value after the units ``x`` (T,) against "the mean is at or below ``bar``" (``above``:
    the evidence for a mean above it) or "at or above ``bar``": the one gambler's wealth, valid at any
    stopping time (the confidence sequence drops ``bar`` once this reaches 2/α)."""
    x = np.asarray(x, dtype=float)
    if not 0 < bar < 1 or x.size == 0:
        return float("nan")
    log_up, log_down = capital(x, np.array([bar]), alpha)
    return float(np.exp((log_up if above else log_down)[0, -1]))
