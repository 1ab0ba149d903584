"""``predict_r_star``: the data-only predictor of the intrinsic rank (E6, X1; docs/claims.md).

Defaults per setting:

| teacher | V given | method |
| --- | --- | --- |
| ``linear-qk`` | yes | ``linear_v_known`` |
| ``linear-qk`` | no | ``linear_v_unknown`` |
| ``softmax`` | yes, ``n ≤ min(d, d_v)`` | ``softmax_log_attention`` (exact where identifiable) |
| ``softmax`` | otherwise | ``softmax_linearised`` (the paper's estimators; flagged not identifiable) |
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..errors import DataError, UnknownNameError, UserInputError, did_you_mean
from ..registry import PREDICTORS
from ..spectra import estimate_all, panel_description, round_estimate
from .base import Fit
from .cut import cross_checked_cut, cut_params
from .data import check_arrays
from .goodness import (
    FREE_SIGMA_SAMPLES,
    HOLD_FRACTION,
    MAX_TESTED,
    MIN_HELD,
    class_test,
    held_out,
    not_tested,
    outside_row_sigma,
    split_description,
)
from .result import Prediction

TEACHERS = ("linear-qk", "softmax")
CUT_KEY = "noise_calibrated_rank"


def default_method(teacher: str, n: int, d: int, d_v: int, v_known: bool) -> str:
    """The method :func:`predict_r_star` uses when none is named (table in the module docstring)."""
    if teacher == "linear-qk":
        return "linear_v_known" if v_known else "linear_v_unknown"
    return "softmax_log_attention" if v_known and n <= min(d, d_v) else "softmax_linearised"


def _estimates(fit: Fit, r_cut: int) -> tuple[dict[str, float], dict[str, Any]]:
    if fit.singular_values.size == 0:
        return {}, {}
    sigma = fit.entry_noise if np.isfinite(fit.entry_noise) else None
    panel = estimate_all(fit.singular_values, shape=fit.shape, sigma=sigma)
    estimates = {k: float(v) for k, v in panel.items()}
    params = panel_description(sigma_known=sigma is not None)
    estimates[CUT_KEY] = float(r_cut)
    params[CUT_KEY] = cut_params()
    estimates.update({k: float(v) for k, v in fit.extra.items()})
    params.update(fit.params)
    return estimates, params


def _goodness_of_fit(fit: Fit, X, Y, V, held, r_hat: int, split: dict, seed: int) -> dict[str, Any]:
    """The held-out test of the teacher class (:mod:`.goodness`), or why it was not run."""
    if held is None:
        return not_tested(
            f"not tested: N = {X.shape[0]} would hold out {round(HOLD_FRACTION * X.shape[0])} samples, fewer "
            f"than {MIN_HELD}",
            split,
        )
    train = np.flatnonzero(~held)[:FREE_SIGMA_SAMPLES]
    free = outside_row_sigma(X[train], Y[train], V)
    tested = np.flatnonzero(held)[:MAX_TESTED]
    result = class_test(fit, X[tested], Y[tested], r_hat, free, np.random.default_rng([seed, 29]))
    if result is None:
        why = fit.untested_reason if fit.singular_values.size else f"nothing was fitted ({fit.reason})"
        return not_tested(f"not tested: {why}", split)
    return {**result, "split": split}


def _check_choice(name: str, value: Any, choices: Any) -> None:
    if value not in choices:
        raise UserInputError(
            f"The '{name}' parameter must be one of {', '.join(map(str, choices))}. Got {value!r} instead."
            + did_you_mean(str(value), choices)
        )


def predict_r_star(
    X: Any,
    Y: Any,
    *,
    teacher: str,
    V: Any = None,
    method: str | None = None,
    estimator: str | None = None,
    seed: int = 0,
    check_fit: bool = True,
) -> Prediction:
    """Predict r* from data ``X (N, n, d)``, ``Y (N, n, d_v)`` (and ``V (d, d_v)`` if known).

    ``teacher`` is ``"linear-qk"`` (``"linear_qk"`` is accepted too) or ``"softmax"``, the teachers of
    :mod:`entropic_bound.tasks.names`; the fitted kernel absorbs any scale of ``K*`` (their
    ``1/√d`` and ``1/n`` included), so ``r*`` is ``rank K*``. ``r_hat`` is the noise-calibrated cut
    (:mod:`.cut`: ``#{σ_i(K̂) > safety · max ||Ê||₂}``, ``Ê`` simulated estimation noise at the
    residual noise level) unless ``estimator`` names a key of ``estimates`` (then its rounded
    value). ``seed`` seeds the noise simulation and the held-out split of the goodness-of-fit test
    (:mod:`.goodness`, result ``fit``; ``check_fit=False`` skips that test and its bootstrap, about
    40 % of a softmax_log_attention prediction's CPU, leaving every other field the same). Bad
    arrays raise :class:`DataError`; well-formed but non-identifiable data give
    ``identifiable=False`` with the reason.
    """
    start = time.perf_counter()
    teacher = teacher.replace("_", "-") if isinstance(teacher, str) else teacher  # linear_qk too
    _check_choice("teacher", teacher, TEACHERS)
    X, Y, V = check_arrays(X, Y, V)
    N, n, d = X.shape
    d_v = Y.shape[2]
    name = method or default_method(teacher, n, d, d_v, V is not None)
    fn = PREDICTORS.get(name)
    held = held_out(N, seed)
    try:
        fit: Fit = fn(X, Y, V, rng=np.random.default_rng(seed), held=held)
    except np.linalg.LinAlgError as exc:  # degenerate data the magnitude check did not catch
        raise DataError(
            f"The '{name}' predictor's linear algebra failed on these data ({exc}); check X, Y and V for "
            "degenerate or extreme values."
        ) from None
    cut, estimates, params, r_hat = read_rank(fit, name, estimator)
    split = split_description(N, held, seed)
    if check_fit:
        gof = _goodness_of_fit(fit, X, Y, V, held, int(r_hat), split, seed)
    else:
        gof = not_tested("not tested: check_fit=False", split)
    shapes = {"X": list(X.shape), "Y": list(Y.shape), "V": None if V is None else list(V.shape)}
    return prediction(fit, name, (cut, estimates, params, r_hat), shapes, gof, time.perf_counter() - start)


def read_rank(fit: Fit, name: str, estimator: str | None = None):
    """``(cut, estimates, estimator params, r_hat)`` of a fitted spectrum: the noise-calibrated cut, or
    the rounded estimate ``estimator`` names."""
    cut = cross_checked_cut(fit.singular_values, fit.noise_top)
    estimates, params = _estimates(fit, cut.r_hat)
    r_hat = cut.r_hat if fit.singular_values.size else -1
    if estimator is not None and estimator != CUT_KEY:
        if estimator not in estimates:
            available = ", ".join(sorted(estimates)) or "(none: nothing identifiable)"
            raise UnknownNameError(
                f"Unknown estimator '{estimator}' for method '{name}'. Available: {available}."
                + did_you_mean(estimator, estimates)
            )
        r_hat = int(round_estimate(estimates[estimator]))
    return cut, estimates, params, r_hat


def prediction(fit: Fit, name: str, rank, shapes: dict, gof: dict, timing_s: float) -> Prediction:
    """The :class:`Prediction` of ``fit`` with its :func:`read_rank` ``rank``, the data's ``shapes``
    (``{"X": [N, n, d], ...}``) and the goodness-of-fit record ``gof``."""
    cut, estimates, params, r_hat = rank
    identifiable, reason = fit.identifiable, fit.reason
    if identifiable and fit.rank_cap is not None and r_hat >= fit.rank_cap:
        identifiable, reason = False, fit.cap_reason
    return Prediction(
        r_hat=int(r_hat),
        method=name,
        estimates=estimates,
        estimator_params=params,
        singular_values=[float(v) for v in fit.singular_values],
        identifiable=bool(identifiable),
        reason=reason,
        noise_level=float(fit.sigma),
        margin=cut.margin,
        timing_s=timing_s,
        n_samples=shapes["X"][0],
        shapes=shapes,
        kernel_noise=cut.noise_level,
        threshold=cut.threshold,
        n_equations=fit.n_equations,
        n_unknowns=fit.n_unknowns,
        too_few_samples=fit.too_few_samples,
        cut=cut.describe() if fit.singular_values.size else {},
        fit=gof,
    )
