"""Batched singular values in float64, dense and factored.

Every spectrum in the project is computed here, once, in float64: inputs are cast to
float64 *before* the decomposition, so a float32 model's operator is measured at float64 precision
of its stored values. Inputs may be numpy arrays or torch tensors (any device); outputs are numpy.

The factored route follows TransformerLens's ``FactoredMatrix``: the singular values of
``K = W_Q W_Kᵀ`` (d×d, rank ≤ d_head) come from the d_head×d_head core of two thin QRs, never from
the d×d product.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..errors import DataError


def as_float64_tensor(x: Any, *, name: str = "input") -> torch.Tensor:
    """Return ``x`` (numpy array, torch tensor or nested list) as a detached float64 tensor.

    A torch tensor keeps its device; anything else lands on the CPU. Complex input is rejected.
    """
    if isinstance(x, torch.Tensor):
        t = x.detach()
    else:
        arr = np.asarray(x)
        if arr.dtype == object:
            raise DataError(f"The '{name}' must be a numeric array. Got an object array instead.")
        if any(stride < 0 for stride in arr.strides):  # torch rejects negative strides (e.g. a[::-1])
            arr = arr.copy()
        t = torch.from_numpy(arr)
    if t.is_complex():
        raise DataError(f"The '{name}' must be real. Got dtype {t.dtype} instead.")
    return t.to(torch.float64)


def _check_matrices(t: torch.Tensor, name: str) -> None:
    if t.ndim < 2:
        raise DataError(
            f"The '{name}' must have shape (..., m, k) with at least 2 dimensions. "
            f"Got shape {tuple(t.shape)} instead."
        )
    if t.numel() and not bool(torch.isfinite(t).all()):
        raise DataError(f"The '{name}' contains NaN or infinite values.")


def _svdvals(t: torch.Tensor) -> np.ndarray:
    """svdvals of a float64 (..., m, k) tensor, robust to empty dimensions."""
    m, k = t.shape[-2], t.shape[-1]
    if min(m, k) == 0:
        return np.zeros((*t.shape[:-2], 0), dtype=np.float64)
    return torch.linalg.svdvals(t).cpu().numpy()  # (..., min(m, k)), descending


def singular_values(mats: Any) -> np.ndarray:
    """Singular values of a batch of matrices, float64, descending.

    Args:
        mats: array or tensor of shape ``(..., m, k)``; cast to float64 before the SVD.

    Returns:
        ``np.ndarray`` of shape ``(..., min(m, k))``, float64, sorted descending along the last axis.
    """
    t = as_float64_tensor(mats, name="mats")  # (..., m, k)
    _check_matrices(t, "mats")
    return _svdvals(t)


def factored_singular_values(left: Any, right: Any) -> np.ndarray:
    """Singular values of ``left @ rightᵀ`` without forming the product.

    For ``left = Q_L R_L`` and ``right = Q_R R_R`` (reduced QR, ``Q`` with orthonormal columns),
    ``left @ rightᵀ = Q_L (R_L R_Rᵀ) Q_Rᵀ``, so its nonzero singular values are those of the small
    core ``R_L R_Rᵀ`` of shape ``(min(m, r), min(k, r))``. Cost ``O(m r² + k r² + r³)`` instead of
    ``O(m k min(m, k))``. This is how ``K = W_Q W_Kᵀ`` is measured (TransformerLens ``FactoredMatrix``).

    Args:
        left: ``(..., m, r)``, e.g. ``W_Q`` of shape ``(d_model, d_head)``.
        right: ``(..., k, r)``, e.g. ``W_K``; leading axes broadcast against ``left``'s.

    Returns:
        ``np.ndarray`` of shape ``(..., min(m, k, r))``, float64, descending. These are the top
        ``min(m, k, r)`` singular values of the ``m × k`` product; all further ones are exactly zero.
    """
    a = as_float64_tensor(left, name="left")  # (..., m, r)
    b = as_float64_tensor(right, name="right")  # (..., k, r)
    _check_matrices(a, "left")
    _check_matrices(b, "right")
    if a.shape[-1] != b.shape[-1]:
        raise DataError(
            "The 'left' (..., m, r) and 'right' (..., k, r) factors must share their last dimension r. "
            f"Got shapes {tuple(a.shape)} and {tuple(b.shape)} instead."
        )
    b = b.to(a.device)
    r_left = torch.linalg.qr(a, mode="r").R  # (..., min(m, r), r)
    r_right = torch.linalg.qr(b, mode="r").R  # (..., min(k, r), r)
    core = r_left @ r_right.transpose(-1, -2)  # (..., min(m, r), min(k, r))
    return _svdvals(core)  # (..., min(m, k, r))
