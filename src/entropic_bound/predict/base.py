"""The record every predictor returns (the predictors themselves are named in ``registry.PREDICTORS``).

A method is a pure function of arrays ``fn(X, Y, V, *, rng, held=None) -> Fit``: ``X (N, n, d)``,
``Y (N, n, d_v)``, ``V (d, d_v)`` or ``None``; ``held (N,)`` marks the samples its goodness-of-fit
model (:mod:`.goodness`) must not see. It returns the spectrum of a matrix whose rank is
``r*`` (usually the kernel estimate ``K̂``) together with draws of that matrix's *estimation noise*
under the fitted noise level, which :mod:`.cut` turns into the noise-calibrated ``r_hat``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

# Samples per chunk when streaming over N: bounds peak memory to O(chunk · n · d²) floats.
CHUNK = 512


@dataclasses.dataclass
class Fit:
    """What a method measured.

    Attributes:
        singular_values: ``(m,)`` descending singular values of the rank-revealing matrix.
        noise_top: ``(draws,)`` top singular value of simulated estimation noise of that matrix
            (same scale, fitted σ); the cut is ``safety · max(noise_top)``.
        sigma: estimated noise standard deviation of ``Y`` entries.
        entry_noise: estimated per-entry noise std of the matrix (for Gavish–Donoho, known σ).
        shape: ``(rows, cols)`` of the rank-revealing matrix.
        identifiable: whether this method can identify r* from these data at all.
        reason: why (not), in one sentence.
        n_equations, n_unknowns: scalar equations used and unknowns solved for.
        too_few_samples: the data have no more scalar equations than unknowns (a sample count problem).
        rank_cap: estimates ``>= rank_cap`` are not identifiable (``cap_reason`` says why).
        extra: further estimates (``{key: value}``) and ``params`` (``{key: dict}``).
        heldout_model: ``(X_h, r) -> Ŷ_h``, the teacher class fitted on the training samples only with
            its kernel truncated to rank ``r``; ``None`` when the method cannot fit its class
            (``untested_reason`` says why).
        heldout_error: ``(X_h, r, rng) -> (B, N_h)``, the parametric bootstrap of ``heldout_model``'s
            estimation error: ``||Δ*_i||²`` on each held-out sample for ``B`` refits of the training
            fit on data simulated from the fitted model (rank ``r``, noise ``sigma``), through the
            method's own equations and weights; the goodness-of-fit null (:mod:`.goodness`).
        heldout_constraint: ``(X_h, Y_h) -> (R, what, k)``, residuals the teacher class fixes without a
            fit (``k`` dof of ``N(0, σ²)`` noise per sample under the class), used when there is no
            ``heldout_model``.
    """

    singular_values: np.ndarray
    noise_top: np.ndarray
    sigma: float
    entry_noise: float
    shape: tuple[int, int]
    identifiable: bool = True
    reason: str = ""
    n_equations: int = 0
    n_unknowns: int = 0
    too_few_samples: bool = False
    rank_cap: int | None = None
    cap_reason: str = ""
    extra: dict[str, float] = dataclasses.field(default_factory=dict)
    params: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    heldout_model: Callable[[np.ndarray, int], np.ndarray] | None = None
    heldout_error: Callable[[np.ndarray, int, np.random.Generator], np.ndarray] | None = None
    heldout_constraint: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, str, int]] | None = None
    untested_reason: str = "no training-only fit of the teacher class (too few training samples?)"


def not_identifiable(
    reason: str,
    *,
    n_equations: int = 0,
    n_unknowns: int = 0,
    too_few_samples: bool = False,
    sigma: float = float("nan"),
) -> Fit:
    """A :class:`Fit` that carries only the reason the data cannot identify r* (and ``sigma``, the
    noise level of ``Y``, where the method estimated it before giving up)."""
    return Fit(
        singular_values=np.zeros(0),
        noise_top=np.zeros(0),
        sigma=float(sigma),
        entry_noise=float("nan"),
        shape=(0, 0),
        identifiable=False,
        reason=reason,
        n_equations=n_equations,
        n_unknowns=n_unknowns,
        too_few_samples=too_few_samples,
    )


Method = Callable[..., Fit]


def chunks(N: int, size: int = CHUNK):
    """Slices ``[0:size], [size:2 size], ...`` covering ``range(N)``."""
    for start in range(0, N, size):
        yield slice(start, min(start + size, N))
