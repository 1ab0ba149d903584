"""Rank estimators: pure functions of singular values.

Every estimator takes ``s`` of shape ``(..., k)`` (singular values, nonnegative; sorted descending
here, so an unsorted input is fine) and returns a float64 ``np.ndarray`` of shape ``(...)``: counts
are integer-valued floats so that every estimator batches the same way. An all-zero (or empty)
spectrum gives 0 for every estimator.

All estimators except ``optimal_hard_threshold`` with a known σ are invariant to positive scaling of
``s``; they work on ``x = s / s_1`` internally so that nothing under- or overflows.

**Last-bit noise.** A float64 SVD is backward stable: each computed singular value is within about
``k · ε · s_1`` of the exact one (``k`` values, ``ε`` = 2.2e-16), and another BLAS or CPU (another
summation order) moves it by that much. So every count compares with a margin of
``NOISE_ULPS · k · ε`` relative to ``s_1`` (:func:`rounding_margin`): a value within it of 0 is 0 (the
trailing values of a rank-deficient matrix are rounding noise, never counted), a value within it of a
threshold is *not* above the threshold, and gaps within it of the largest are ties. An answer then
changes only when a value moves by more than the margin, not by 1 ulp.

Each is registered in :data:`entropic_bound.registry.ESTIMATORS` as an :class:`Estimator` carrying
its formula, reference, integrality and default parameters.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DataError, UserInputError, did_you_mean
from .marchenko_pastur import lambda_star, omega
from .svd import as_float64_tensor

# Relative slack for "cumulative energy >= tau * total" so that exact ratios (k/r for a flat
# spectrum) are not lost to the last bit of a cumulative sum.
_ENERGY_RTOL = 1e-12
# A largest log-gap at or below this is "no gap" (a flat spectrum, up to float64 SVD noise).
_FLAT_LOG_GAP = 1e-8
#: Ulps per singular value in the rounding margin of the counts (module docstring): a few, times k.
NOISE_ULPS = 16


def rounding_margin(k: int) -> float:
    """``NOISE_ULPS · k · ε``: how far, relative to ``s_1``, rounding can move a computed singular value
    of a spectrum of ``k`` values — the tolerance of every count's comparison."""
    return NOISE_ULPS * max(int(k), 1) * float(np.finfo(np.float64).eps)


def _above(x: np.ndarray, cut: Any) -> np.ndarray:
    """``x > cut`` for ``x = s / s_1`` (..., k), tolerant of rounding: a value must clear the cut by
    the relative margin and exceed the margin itself (values within it of 0 are 0)."""
    margin = rounding_margin(x.shape[-1])
    return x > np.maximum(np.asarray(cut, dtype=np.float64) * (1 + margin), margin)


@dataclasses.dataclass(frozen=True)
class Estimator:
    """A registered rank estimator: ``fn(s, **params)`` plus what a report needs to describe it."""

    name: str
    fn: Callable[..., np.ndarray]
    formula: str
    reference: str
    integer: bool
    defaults: dict = dataclasses.field(default_factory=dict)
    #: ``{key: params}``: the rows this estimator adds to the standard panel (``spectra.panel``).
    panel: dict = dataclasses.field(default_factory=dict)

    def __call__(self, s: Any, **params: Any) -> np.ndarray:
        allowed = set(inspect.signature(self.fn).parameters) - {"s"}
        for key in params:
            if key not in allowed:
                raise UserInputError(
                    f"Unknown parameter '{key}' for estimator '{self.name}'. "
                    f"Available: {', '.join(sorted(allowed)) or '(none)'}.{did_you_mean(key, allowed)}"
                )
        return self.fn(s, **params)


def _register(*, formula: str, reference: str, integer: bool, panel: dict | None = None) -> Callable:
    """Register ``fn`` as an :class:`Estimator` named after it; defaults are read from its keyword-only
    signature; its registry entry and summary are declared in ``registry.py``. ``panel`` is
    ``{key: params}``, the rows it adds to the standard panel every experiment reports (default: one
    row under its own name with its defaults; ``{}`` keeps it off the panel)."""

    def decorator(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        name = fn.__name__
        defaults = {
            p.name: p.default
            for p in inspect.signature(fn).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is not inspect.Parameter.empty
        }
        rows = {name: {}} if panel is None else dict(panel)
        est = Estimator(name, fn, formula, reference, integer, defaults, rows)
        fn.estimator = est  # the registry's lazy entry (registry.py) names it
        return fn

    return decorator


def _check_unit(name: str, value: float, *, lo_open: bool, hi_open: bool) -> float:
    value = float(value)
    ok = (value > 0 if lo_open else value >= 0) and (value < 1 if hi_open else value <= 1)
    if not ok:
        interval = f"{'(' if lo_open else '['}0, 1{')' if hi_open else ']'}"
        raise UserInputError(f"The '{name}' parameter must be a float in {interval}. Got {value!r} instead.")
    return value


def _normalised(s: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``s`` (..., k); return ``x = s / s_1`` sorted descending and the mask ``s_1 > 0``.

    Rows with ``s_1 = 0`` (all-zero spectra) come back as all zeros with ``mask`` False.
    """
    s = as_float64_tensor(s, name="s").cpu().numpy()
    if s.ndim < 1:
        raise DataError("The 's' (singular values) must have shape (..., k). Got a scalar instead.")
    if s.size and not np.isfinite(s).all():
        raise DataError("The 's' (singular values) contains NaN or infinite values.")
    if s.size and (s < 0).any():
        raise DataError(f"The 's' (singular values) must be nonnegative. Got minimum {s.min()!r} instead.")
    s = -np.sort(-s, axis=-1)  # (..., k), descending
    top = s[..., :1] if s.shape[-1] else np.zeros((*s.shape[:-1], 1))
    mask = top[..., 0] > 0  # (...)
    x = np.divide(s, top, out=np.zeros_like(s), where=top > 0)  # (..., k), x_1 = 1 or all 0
    return x, mask


def _entropy_exp(w: np.ndarray) -> np.ndarray:
    """``exp(H(w / Σw))`` along the last axis for nonnegative weights; 0 where ``Σw = 0``."""
    total = w.sum(axis=-1, keepdims=True)  # (..., 1)
    p = np.divide(w, total, out=np.zeros_like(w), where=total > 0)  # (..., k)
    plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    out = np.exp(-plogp.sum(axis=-1))  # (...)
    return np.asarray(np.where(total[..., 0] > 0, out, 0.0), dtype=np.float64)


@_register(
    formula="#{i : s_i > tol * s_1}",
    reference="Golub & Van Loan, Matrix Computations (4th ed.), §5.4.1 (numerical rank)",
    integer=True,
    panel={"numerical_rank": {"tol": 1e-2}},
)
def numerical_rank(s: Any, *, tol: float = 1e-2) -> np.ndarray:
    """Numerical rank ``#{i : s_i > tol · s_1}`` with a tolerance relative to the top singular value.

    Reference: Golub & Van Loan, *Matrix Computations*, §5.4.1. ``tol ∈ [0, 1)``; ``tol = 0`` counts
    the singular values above rounding noise (``rounding_margin(k) · s_1``, like ``numpy.linalg.
    matrix_rank``'s default). A value within that relative margin of ``tol · s_1`` is not counted.
    Shape ``(..., k) -> (...)``.
    """
    tol = _check_unit("tol", tol, lo_open=False, hi_open=True)
    x, mask = _normalised(s)
    return np.where(mask, _above(x, tol).sum(axis=-1), 0).astype(np.float64)


@_register(
    formula="exp(H(p)), p_i = s_i^2 / sum_j s_j^2",
    reference="Entropy of the normalised energy spectrum (Roy & Vetterli 2007 applied to s_i^2)",
    integer=False,
)
def energy_effective_rank(s: Any) -> np.ndarray:
    """Energy effective rank ``exp(H(p))`` with ``p_i = s_i² / Σ_j s_j²`` (Shannon entropy, nats).

    Reference: the construction of O. Roy and M. Vetterli, "The effective rank: a measure of
    effective dimensionality", EUSIPCO 2007, applied to the energies ``s_i²``.
    Equals ``r`` for a flat rank-``r`` spectrum and lies in ``[1, rank]``. Shape ``(..., k) -> (...)``.
    """
    x, _ = _normalised(s)
    return _entropy_exp(x**2)


@_register(
    formula="exp(H(q)), q_i = s_i / sum_j s_j",
    reference="O. Roy and M. Vetterli, 'The effective rank: a measure of effective dimensionality', EUSIPCO 2007",
    integer=False,
)
def entropy_effective_rank(s: Any) -> np.ndarray:
    """Effective rank ``exp(H(q))`` with ``q_i = s_i / Σ_j s_j`` (Shannon entropy, nats).

    Reference: O. Roy and M. Vetterli, "The effective rank: a measure of effective dimensionality",
    EUSIPCO 2007. Lies in ``[1, rank]``. Shape ``(..., k) -> (...)``.
    """
    x, _ = _normalised(s)
    return _entropy_exp(x)


@_register(
    formula="sum_i s_i^2 / s_1^2",
    reference="M. Rudelson and R. Vershynin, 'Sampling from large matrices', J. ACM 54(4), 2007",
    integer=False,
)
def stable_rank(s: Any) -> np.ndarray:
    """Stable rank ``Σ_i s_i² / s_1² = ||A||_F² / ||A||_2²``.

    Reference: M. Rudelson and R. Vershynin, "Sampling from large matrices: an approach through
    geometric functional analysis", J. ACM 54(4), 2007. Lies in ``[1, rank]``. Shape ``(..., k) -> (...)``.
    """
    x, _ = _normalised(s)
    return np.asarray((x**2).sum(axis=-1), dtype=np.float64)


@_register(
    formula="(sum_i s_i^2)^2 / sum_i s_i^4",
    reference="Participation ratio of the energies s_i^2; P. Gao, E. Trautmann, B. Yu et al., bioRxiv 214262, 2017",
    integer=False,
)
def participation_ratio(s: Any) -> np.ndarray:
    """Participation ratio ``(Σ s_i²)² / Σ s_i⁴`` of the energies ``s_i²``.

    Reference: P. Gao, E. Trautmann, B. Yu et al., "A theory of multineuronal dimensionality,
    dynamics and measurement", bioRxiv 214262, 2017. Lies in ``[1, rank]``. Shape ``(..., k) -> (...)``.
    """
    x, mask = _normalised(s)
    e = x**2  # (..., k)
    num = e.sum(axis=-1) ** 2
    den = (e**2).sum(axis=-1)
    return np.asarray(np.divide(num, den, out=np.zeros_like(num), where=mask), dtype=np.float64)


@_register(
    formula="min{k : sum_{i<=k} s_i^2 >= tau * sum_i s_i^2}",
    reference="Energy (explained-variance) criterion, I. T. Jolliffe, Principal Component Analysis (2nd ed.), §6.1.1",
    integer=True,
    panel={"energy_threshold_rank_90": {"tau": 0.9}, "energy_threshold_rank_99": {"tau": 0.99}},
)
def energy_threshold_rank(s: Any, *, tau: float = 0.9) -> np.ndarray:
    """Smallest ``k`` with ``Σ_{i≤k} s_i² ≥ τ · Σ_i s_i²`` (share ``τ`` of the energy).

    Reference: I. T. Jolliffe, *Principal Component Analysis* (2nd ed.), §6.1.1 (cumulative
    percentage of total variation). ``τ ∈ (0, 1]``. The comparison allows a relative slack of 1e-12
    so exact ratios survive rounding of the cumulative sum. Shape ``(..., k) -> (...)``.
    """
    tau = _check_unit("tau", tau, lo_open=True, hi_open=False)
    x, mask = _normalised(s)
    cum = np.cumsum(x**2, axis=-1)  # (..., k)
    total = cum[..., -1:] if cum.shape[-1] else np.zeros((*cum.shape[:-1], 1))
    below = (cum < tau * total * (1 - _ENERGY_RTOL)).sum(axis=-1)  # (...)
    return np.where(mask, below + 1, 0).astype(np.float64)


@_register(
    formula="argmax_i log(s_i / s_{i+1}) over s_{i+1} > floor * s_1; first drop below floor = infinite gap",
    reference="Largest spectral gap (eigengap heuristic), U. von Luxburg, 'A tutorial on spectral clustering', 2007, §8.3",
    integer=True,
)
def largest_gap_rank(s: Any, *, floor: float = 1e-12) -> np.ndarray:
    """The cut ``k`` at the largest relative gap: ``argmax_i log(s_i / s_{i+1})`` (1-based ``k = i``).

    Reference: the eigengap heuristic, U. von Luxburg, "A tutorial on spectral clustering",
    Statistics and Computing 17(4), 2007, §8.3. Rule, with ``x = s / s_1``:

    - pairs with ``x_{i+1} > floor`` have gap ``log(x_i / x_{i+1})``;
    - the first ``i`` with ``x_i > floor ≥ x_{i+1}`` (the spectrum drops to exact/near zero) has an
      infinite gap, so a matrix of exact rank ``r`` returns ``r``;
    - ties go to the smallest ``i``; gaps within rounding of the largest are ties (each ``x_i`` is
      known to ``δ = rounding_margin(k)``, so ``log(x_i / x_{i+1})`` to ``δ / x_i + δ / x_{i+1}``);
    - if no gap exceeds ``1e-8`` in log (a flat spectrum), there is no cut: return the number of
      values above the floor (the full length for a flat full spectrum);
    - an all-zero spectrum returns 0.

    ``floor ∈ [0, 1)``. Shape ``(..., k) -> (...)``.
    """
    floor = _check_unit("floor", floor, lo_open=False, hi_open=True)
    x, mask = _normalised(s)
    above = x > floor  # (..., k)
    n_above = above.sum(axis=-1)  # (...)
    if x.shape[-1] < 2:
        return np.where(mask, n_above, 0).astype(np.float64)
    hi, lo = x[..., :-1], x[..., 1:]  # (..., k-1)
    safe_lo = np.where(lo > floor, lo, 1.0)
    safe_hi = np.where(hi > floor, hi, 1.0)
    gaps = np.where(lo > floor, np.log(safe_hi) - np.log(safe_lo), -np.inf)  # (..., k-1)
    gaps = np.where(above[..., :-1] & ~above[..., 1:], np.inf, gaps)
    best = gaps.max(axis=-1, keepdims=True)  # (..., 1)
    delta = rounding_margin(x.shape[-1])
    slack = delta / safe_hi + delta / safe_lo  # (..., k-1): the rounding of each log-gap
    tied = (gaps == best) | (gaps >= best - slack)  # inf == inf counts; inf - slack is inf
    cut = tied.argmax(axis=-1) + 1  # (...), the first of the ties
    flat = best[..., 0] <= _FLAT_LOG_GAP
    cut = np.where(flat, n_above, cut)
    return np.where(mask, cut, 0).astype(np.float64)


#: The known-noise hard threshold's cut, relative to s_1, when σ = 0 is given (see its docstring).
NOISE_FREE_CUT = math.sqrt(np.finfo(np.float64).eps)


@_register(
    formula="#{i : s_i > omega(beta) * median(s)} (sigma unknown) or #{i : s_i > lambda*(beta) sqrt(N_large) sigma}",
    reference="M. Gavish and D. L. Donoho, 'The optimal hard threshold for singular values is 4/sqrt(3)', IEEE TIT 60(8), 2014",
    integer=True,
)
def optimal_hard_threshold(s: Any, *, shape: tuple[int, int], sigma: float | None = None) -> np.ndarray:
    """Gavish–Donoho optimal hard threshold: the number of singular values above the threshold.

    Reference: M. Gavish and D. L. Donoho, "The Optimal Hard Threshold for Singular Values is 4/√3",
    IEEE Trans. Inf. Theory 60(8), 2014. ``shape = (m, N)`` of the original matrix in either
    orientation; ``β = min(m, N) / max(m, N)`` and ``N_large = max(m, N)`` (the transpose has the
    same spectrum, so the orientation must not matter). Noise model: iid ``N(0, σ²)`` entries.

    - σ known: count ``s_i > λ*(β) · √N_large · σ``, ``λ*(β) = sqrt(2(β+1) + 8β / ((β+1) + sqrt(β² + 14β + 1)))``.
    - σ unknown: count ``s_i > ω(β) · median(s)``, ``ω(β) = λ*(β) / sqrt(μ_β)`` with ``μ_β`` the
      Marchenko–Pastur median (solved numerically); needs the full spectrum, ``k = min(m, N)``.

    Rounding (module docstring): values within ``rounding_margin(k) · s_1`` of 0 are 0 — also in the
    median, so the trailing rounding noise of a rank-deficient matrix never sets the cut — and a value
    within that relative margin of the cut is not counted. The known-noise cut is never below
    ``√ε · s_1`` (:data:`NOISE_FREE_CUT`): with σ = 0, or a σ measured at round-off level (2e-15 on
    noise-free E6 data), a matrix that was *computed* (a least-squares estimate, a product) carries
    round-off of order cond · ε · s_1, above the spectrum's own rounding margin, and counting it made
    the answer flip with the last bits of the inputs (a 4-ulp perturbation turned 3 into 4 on a rank-3
    E6 estimate); √ε is the usual floor of what float64 arithmetic can resolve.

    Known failure: with σ unknown it returns 0 once the rank reaches ``min(m, N)/2`` (the median is
    then a signal value). Shape ``(..., k) -> (...)``.
    """
    m, n = _check_shape(shape)
    beta, n_large = min(m, n) / max(m, n), max(m, n)
    x, mask = _normalised(s)
    k = x.shape[-1]
    if k > min(m, n):
        raise DataError(f"A {m}x{n} matrix has at most {min(m, n)} singular values. Got {k} instead.")
    if sigma is None:
        if k != min(m, n):
            raise DataError(
                f"The unknown-noise optimal hard threshold needs all {min(m, n)} singular values of a "
                f"{m}x{n} matrix (it uses their median). Got {k} instead; pad a factored spectrum with "
                "zeros or pass 'sigma'."
            )
        signal = np.where(_above(x, 0.0), x, 0.0)  # (..., k): rounding noise is 0
        cut = omega(beta) * np.median(signal, axis=-1, keepdims=True)  # (..., 1), relative to s_1
        return np.where(mask, _above(x, cut).sum(axis=-1), 0).astype(np.float64)
    sigma = float(sigma)
    if not (sigma >= 0 and math.isfinite(sigma)):
        raise UserInputError(f"The 'sigma' parameter must be a float in [0, inf). Got {sigma!r} instead.")
    s = -np.sort(-as_float64_tensor(s, name="s").cpu().numpy(), axis=-1)  # validated above
    s1 = s[..., :1] if k else np.zeros((*s.shape[:-1], 1))  # (..., 1)
    cut = lambda_star(beta) * math.sqrt(n_large) * sigma  # absolute; relative to s_1 below
    rel_cut = np.divide(cut, s1, out=np.full_like(s1, np.inf), where=s1 > 0)
    rel_cut = np.maximum(rel_cut, NOISE_FREE_CUT)  # no cut below what float64 resolves
    return np.where(mask, _above(x, rel_cut).sum(axis=-1), 0).astype(np.float64)


def _check_shape(shape: Any) -> tuple[int, int]:
    try:
        m, n = (int(v) for v in shape)
        ok = m >= 1 and n >= 1 and (m, n) == tuple(shape)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise UserInputError(
            f"The 'shape' parameter must be a pair (m, N) of positive ints. Got {shape!r} instead."
        )
    return m, n
