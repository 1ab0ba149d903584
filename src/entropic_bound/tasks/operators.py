"""Random low-rank operators with a named spectrum.

A rank-``r*`` operator is built as ``U diag(s) Wᵀ`` with ``U, W`` Haar-random orthonormal columns
and ``s`` one of the named spectra below, rescaled so that ``||U diag(s) Wᵀ||_F = ||s||_2`` equals a
stated Frobenius norm. All arithmetic is float64; randomness comes from an explicit
``torch.Generator``.

Spectra (before scaling), for ``i = 1 … r*``:

- ``flat``:      ``s_i = 1``
- ``geometric``: ``s_i = ρ^{i−1}`` with ``ρ = decay^{1/(r*−1)}``, so ``s_{r*} / s_1 = decay``
- ``power``:     ``s_i = i^{−α}``
"""

from __future__ import annotations

import numpy as np
import torch

from ..errors import UnknownNameError, UserInputError, did_you_mean
from .names import SPECTRA


def make_spectrum(r_star: int, kind: str, *, decay: float = 0.25, alpha: float = 1.0) -> np.ndarray:
    """Unscaled singular values ``s`` of shape ``(r_star,)``, float64, non-increasing, ``s_1 = 1``."""
    if isinstance(r_star, bool) or not isinstance(r_star, (int, np.integer)) or r_star < 1:
        raise UserInputError(f"The 'r_star' parameter must be an int in [1, inf). Got {r_star!r} instead.")
    i = np.arange(1, r_star + 1, dtype=np.float64)
    if kind == "flat":
        return np.ones(r_star, dtype=np.float64)
    if kind == "geometric":
        if not 0.0 < decay <= 1.0:
            raise UserInputError(f"The 'decay' parameter must be a float in (0, 1]. Got {decay!r} instead.")
        if r_star == 1:
            return np.ones(1, dtype=np.float64)
        rho = decay ** (1.0 / (r_star - 1))
        return rho ** (i - 1.0)
    if kind == "power":
        if not alpha >= 0.0:
            raise UserInputError(f"The 'alpha' parameter must be a float in [0, inf). Got {alpha!r} instead.")
        return i ** (-float(alpha))
    raise UnknownNameError(
        f"Unknown spectrum '{kind}'. Available: {', '.join(SPECTRA)}.{did_you_mean(kind, SPECTRA)}"
    )


def haar_orthonormal(m: int, k: int, generator: torch.Generator) -> torch.Tensor:
    """A Haar-random ``(m, k)`` float64 matrix with orthonormal columns (``k <= m``).

    QR of a standard Gaussian matrix with the signs of ``diag(R)`` moved into ``Q`` (Mezzadri 2007,
    "How to generate random matrices from the classical compact groups"); without the sign fix the
    distribution is not Haar.
    """
    assert 1 <= k <= m, f"need 1 <= k <= m, got m={m}, k={k}"
    G = torch.randn(m, k, generator=generator, dtype=torch.float64)  # (m, k)
    Q, R = torch.linalg.qr(G)  # (m, k), (k, k)
    signs = torch.sign(torch.diagonal(R))
    signs[signs == 0] = 1.0
    return Q * signs  # (m, k)


def low_rank_factors(
    m: int, k: int, r_star: int, spectrum: np.ndarray, *, fro_norm: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The factored SVD ``(U (m, r*), s (r*,), W (k, r*))`` of a random operator with ``||s||_2 = fro_norm``.

    ``U`` is drawn before ``W`` from the same generator. ``s`` keeps the shape of ``spectrum``.
    """
    s = np.asarray(spectrum, dtype=np.float64)
    if s.shape != (r_star,):
        raise UserInputError(f"The spectrum must have shape ({r_star},). Got {s.shape} instead.")
    if r_star > min(m, k):
        raise UserInputError(
            f"The 'r_star' parameter must be an int in [1, {min(m, k)}]. Got {r_star} instead."
        )
    if np.any(s < 0) or not np.isfinite(s).all() or s.sum() == 0:
        raise UserInputError("The spectrum must be finite, non-negative and not all zero.")
    s = s * (float(fro_norm) / np.linalg.norm(s))
    U = haar_orthonormal(m, r_star, generator)  # (m, r*)
    W = haar_orthonormal(k, r_star, generator)  # (k, r*)
    return U, torch.from_numpy(s), W


def low_rank_matrix(
    m: int, k: int, r_star: int, spectrum: np.ndarray, *, fro_norm: float, generator: torch.Generator
) -> torch.Tensor:
    """``U diag(s) Wᵀ`` (float64, ``(m, k)``), rank ``r*``, with Frobenius norm ``fro_norm``.

    Its singular values are ``spectrum * fro_norm / ||spectrum||_2`` (in the given order, which is
    non-increasing for every named spectrum).
    """
    U, s, W = low_rank_factors(m, k, r_star, spectrum, fro_norm=fro_norm, generator=generator)
    return (U * s) @ W.T  # (m, k)


def value_matrix(d: int, d_v: int, kind: str, generator: torch.Generator) -> torch.Tensor:
    """The value map ``V* (d, d_v)``, float64.

    ``orthogonal``: Haar orthonormal columns (``d_v <= d``) or rows (``d_v > d``), so
    ``||V*||_F² = min(d, d_v)``. ``gaussian``: iid ``N(0, 1/d)`` entries, ``E||V*||_F² = d_v``.
    """
    if kind == "orthogonal":
        return haar_orthonormal(d, d_v, generator) if d_v <= d else haar_orthonormal(d_v, d, generator).T
    if kind == "gaussian":
        return torch.randn(d, d_v, generator=generator, dtype=torch.float64) / d**0.5
    choices = ("orthogonal", "gaussian")
    raise UnknownNameError(
        f"Unknown v_kind '{kind}'. Available: {', '.join(choices)}.{did_you_mean(kind, choices)}"
    )


def ar1_covariance(n: int, rho: float) -> np.ndarray:
    """The AR(1) token covariance ``C_ij = ρ^{|i−j|}`` (``(n, n)``, float64, positive definite for |ρ| < 1)."""
    idx = np.arange(n)
    return float(rho) ** np.abs(idx[:, None] - idx[None, :]).astype(np.float64)


def sqrtm_psd(C: np.ndarray) -> np.ndarray:
    """The symmetric square root ``C^{1/2}`` of a symmetric PSD matrix (eigendecomposition, float64)."""
    w, Q = np.linalg.eigh(np.asarray(C, dtype=np.float64))
    return (Q * np.sqrt(np.clip(w, 0.0, None))) @ Q.T
