"""Softmax teacher, the paper's estimators: a linearised kernel and the realised mixers (C10).

Linearising the row softmax around uniform attention, ``softmax(L)_st ≈ 1/n + (L_st − L̄_s)/n``:

    Y_i − 1 1ᵀ X_i V / n  ≈  X_i K_lin (X_iᵀ C X_i V),      C = I − 1 1ᵀ/n,

which is linear in ``K_lin`` (∝ K to first order) and solved by the streamed normal equations of
:mod:`.normal_equations`. Without V, ``V̂`` is first fitted to the uniform-attention part
``Y_i ≈ 1 1ᵀ X_i V / n`` by least squares. The estimates on ``K̂_lin`` (numerical rank, energy
effective rank, ...) are the paper's; they are *biased* for a softmax teacher (the residual is the
softmax's curvature, not noise), which E6 measures — so results are flagged not identifiable.

Realised-mixer ranks: the energy effective rank of the mixers ``M_i`` (the recovered ``Â_i =
Y_i pinv(X_i V)`` when V is known and ``n ≤ min(d, d_v)``, else ``softmax(n X_i K̂_lin X_iᵀ)``, as
``K_lin ≈ K / n``) on up
to ``MIXER_SAMPLES`` inputs, averaged (``realised_mixer_energy_rank``), and of their mean
(``mean_mixer_energy_rank``).
"""

from __future__ import annotations

import numpy as np

from ..spectra import energy_effective_rank
from .base import Fit, chunks, not_identifiable
from .linear_v_known import solve_kernel
from .normal_equations import KronSystem
from .softmax_log_attention import softmax_rows

MIXER_SAMPLES = 64


def fit_uniform_value(X: np.ndarray, Y: np.ndarray) -> np.ndarray | None:
    """``V̂ = argmin Σ ||Y_i − 1 1ᵀ X_i V / n||²`` (d, d_v), or ``None`` if the mean tokens do not span R^d."""
    xbar = X.mean(axis=1)  # (N, d)
    ybar = Y.mean(axis=1)  # (N, d_v): 1ᵀ(Y − 1 x̄ᵀV)=0 per sample gives x̄ᵀV ≈ ȳ
    if np.linalg.matrix_rank(xbar) < X.shape[2]:
        return None
    return np.linalg.lstsq(xbar, ybar, rcond=None)[0]


def _mixer_ranks(X, Y, V, K_hat, recoverable: bool, pinv=None) -> dict[str, float]:
    n = X.shape[1]
    Xs, Ys = X[:MIXER_SAMPLES], Y[:MIXER_SAMPLES]
    if recoverable:
        M = Ys @ (mixer_pinv(X, V) if pinv is None else pinv)  # (m, n, n) recovered attention
    else:
        M = softmax_rows(n * (Xs @ K_hat @ Xs.transpose(0, 2, 1)))  # (m, n, n); K_lin ≈ K / n
    s = np.linalg.svd(M, compute_uv=False)  # (m, n)
    return {
        "realised_mixer_energy_rank": float(np.mean(energy_effective_rank(s))),
        "mean_mixer_energy_rank": float(
            energy_effective_rank(np.linalg.svd(M.mean(axis=0), compute_uv=False))
        ),
    }


def mixer_pinv(X: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``pinv(X_i V)`` of the first ``MIXER_SAMPLES`` samples ``(m, d_v, n)``: V known, the attention
    ``Â_i = Y_i pinv(X_i V)`` is recovered from them (shared by every ``Y`` on these inputs)."""
    return np.linalg.pinv(X[:MIXER_SAMPLES] @ V)


def _centred_value_inputs(Xc: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(U = X V (c, n, d_v), B = Xᵀ C X V (c, d, d_v))`` of one chunk."""
    U = Xc @ V  # (c, n, d_v)
    return U, Xc.transpose(0, 2, 1) @ (U - U.mean(axis=1, keepdims=True))  # Xᵀ C X V


def linearised_gram(X: np.ndarray, V: np.ndarray) -> KronSystem:
    """The normal matrix of the linearised kernel with V known, without targets: it depends on X and V
    alone, so every ``Y`` on these inputs shares it (:meth:`.KronSystem.with_same_gram`)."""
    system = KronSystem(X.shape[2])
    for sl in chunks(X.shape[0]):
        system.add_gram(X[sl], _centred_value_inputs(X[sl], V)[1])
    return system


def softmax_linearised(
    X: np.ndarray,
    Y: np.ndarray,
    V: np.ndarray | None,
    *,
    rng: np.random.Generator,
    held=None,
    gram: KronSystem | None = None,
    pinv: np.ndarray | None = None,
) -> Fit:
    """Linearised kernel ``K̂_lin`` and realised-mixer ranks. ``X (N, n, d)``, ``Y (N, n, d_v)``, ``V (d, d_v)``
    or None. With V known, ``gram`` (:func:`linearised_gram`) and ``pinv`` (:func:`mixer_pinv`) may
    be given from other targets on the same ``X``: the numbers are the same."""
    N, n, d = X.shape
    v_known = V is not None
    if not v_known:
        V = fit_uniform_value(X, Y)
        if V is None:
            return not_identifiable(
                f"softmax_linearised without V: the N = {N} mean tokens do not span R^{d}, "
                "so V cannot be fitted to the uniform-attention part."
            )
    shared = gram is not None and v_known
    system = gram.with_same_gram() if shared else KronSystem(d)
    for sl in chunks(N):
        U, B = _centred_value_inputs(X[sl], V)
        T = Y[sl] - U.mean(axis=1, keepdims=True)  # Y − 1 1ᵀ X V / n
        (system.add_target if shared else system.add)(X[sl], B, T)
    fit, K_hat = solve_kernel(system, rng, what="softmax linearised around uniform attention")
    if K_hat is None:
        return fit
    fit.extra.update(_mixer_ranks(X, Y, V, K_hat, v_known and n <= min(d, Y.shape[2]), pinv))
    fit.params.update(
        {
            "realised_mixer_energy_rank": {
                "estimator": "energy_effective_rank",
                "params": {"samples": min(N, MIXER_SAMPLES)},
                "formula": "mean_i exp H(s(M_i)^2 / sum)",
                "reference": "energy effective rank: Roy & Vetterli 2007 applied to s_i^2 (spectra/estimators.py)",
                "integer": False,
            },
            "mean_mixer_energy_rank": {
                "estimator": "energy_effective_rank",
                "params": {"samples": min(N, MIXER_SAMPLES)},
                "formula": "exp H(s(mean_i M_i)^2 / sum)",
                "reference": "energy effective rank: Roy & Vetterli 2007 applied to s_i^2 (spectra/estimators.py)",
                "integer": False,
            },
        }
    )
    fit.identifiable = False
    fit.untested_reason = (
        "softmax_linearised fits a kernel linearised around uniform attention, not the softmax class, "
        "so its held-out residual would test the linearisation"
    )
    fit.reason = (
        "softmax, linearised kernel (the paper's estimators): biased for a softmax teacher (C10), the cut "
        "treats the softmax's curvature as noise"
        + ("" if v_known else "; V fitted to uniform attention")
        + "."
    )
    return fit
