"""One kernel for a head's observed attention logits (C13's "no single routing kernel").

For one head on text windows, with the layer's normalised inputs ``x̃ (T, d)`` (the input of the query
projection) and the head's attention ``A (T, T)``, fit

    log A_ij − log A_ik = x̃_iᵀ K (x̃_j − x̃_k) + u·(x̃_j − x̃_k) + b(i−j) − b(i−k)

by least squares: one kernel ``K`` for every query, a key-salience vector ``u`` (what a query bias
``b_Q`` contributes, folded in as a constant query coordinate) and a relative-position bias ``b``.
All differences ``j − k`` of one query are used at once by centring each query's log-attention over
its visible keys, which removes the softmax normaliser exactly (the same log-ratio system as
``predict``'s softmax estimator, :mod:`entropic_bound.predict.log_ratios`, on observed attention
instead of recovered attention; its normal matrix has the same ``Σ (x_i x_iᵀ) ⊗ Q_i`` form).

Inputs are reduced to their top ``max_dims`` principal components and whitened (``z``): a d = 384
model would otherwise need 147,456 unknowns per head. Reported:

- ``logit_field_position_explained``: share of the centred log-attention variance that the position
  bias alone explains;
- ``logit_field_explained``: share of the *content-dependent* variance (what the position-only fit
  leaves) that the one kernel (with ``u`` and ``b`` refitted) explains, adjusted for its degrees of
  freedom like an adjusted R² (``1 − (RSS_full/(N − k_full)) / (RSS_pos/(N − k_pos))``, N the
  equations), so that random logits read ≈ 0 rather than unknowns/equations (≈ 0.3 at d = 48 on
  2 windows of 64 tokens) — ≈ 1 for a softmax head with a bilinear score, small when every query
  routes by its own rule; NaN (rank 0) for a head whose
  attention depends on position only (nothing content-dependent to explain);
- ``logit_field_rank_90``: the smallest ``k`` whose truncated SVD of the fitted kernel (in the
  whitened coordinates, position bias refitted) keeps 90 % of that explained variance, both net of
  the same overfit per parameter — an upper bound on the best rank-k kernel's rank.

**What it measures on a real checkpoint.** A standard (non-rotary) head's scores *are* bilinear in
its query-projection input, ``x̃ W_Q W_Kᵀ x̃ᵀ`` plus bias terms, so with every input dimension kept one
kernel explains 100 % by construction. With ``max_dims < d`` the explained share is the part of the
content routing carried by the top principal directions of the text's inputs (random-weight MiniLM:
0.23–0.40 at 32 of 384 dims; trained MiniLM 0.36–0.93; it grows with ``max_dims``), and
``logit_field_rank_90`` is the rank the logit field uses on the text — the quantity the 2026 study
(Lee, arXiv 2604.04384) compares with the static kernel's rank. For a black-box or synthetic head
(E7's controls, a teacher) ``explained`` tests the one-kernel hypothesis itself.

RoPE models (Llama) rotate queries and keys by position, so no fixed ``K`` exists in ``x̃``; their
``explained`` is a lower bound. The normal equations are built from Kronecker blocks without
forming the ``(equations × unknowns)`` design, and one layer's system is shared by its heads when
their masks agree (the whitening and the visible keys depend on the layer only).
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError

MAX_DIMS = 32
LEVEL = 0.9
#: The per-head columns ``inspect`` adds (with text).
LOGIT_FIELD_COLUMNS = ("logit_field_explained", "logit_field_rank_90", "logit_field_position_explained")
_NO_CONTENT = 1e-9  # content-dependent share of the variance below which a head has none (round-off)
_EIG_CUTOFF = 1e-10  # relative eigenvalue floor of the pseudo-inverse (gauge directions, unused offsets)


def whiten(x: np.ndarray, max_dims: int = MAX_DIMS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top principal components of ``x (B, n, d)`` scaled to unit variance: ``(z (B, n, p), W (d, p), μ (d,))``
    with ``z = (x − μ) W``; directions with variance below ``1e-10`` of the largest are dropped."""
    flat = x.reshape(-1, x.shape[-1])
    mu = flat.mean(axis=0)
    lam, vec = np.linalg.eigh(np.cov(flat - mu, rowvar=False).reshape(x.shape[-1], x.shape[-1]))
    lam, vec = lam[::-1], vec[:, ::-1]
    keep = min(max_dims, int((lam > 1e-10 * lam[0]).sum()))
    W = vec[:, :keep] / np.sqrt(lam[:keep])
    return (x - mu) @ W, W, mu


def _pinv(G: np.ndarray) -> tuple[np.ndarray, int]:
    """Pseudo-inverse of a symmetric positive semi-definite ``G`` (relative eigenvalue cut-off) and its
    rank, the number of parameters the data determine."""
    lam, vec = np.linalg.eigh(G)
    kept = lam > _EIG_CUTOFF * max(lam[-1], 1e-300)
    inv = np.where(kept, 1.0 / np.where(kept, lam, 1.0), 0.0)
    return (vec * inv) @ vec.T, int(kept.sum())


class LogitFieldSystem:
    """The normal equations of the fit for whitened inputs ``z (B, n, p)`` and a key mask ``(B, n, n)``."""

    def __init__(self, z: np.ndarray, mask: np.ndarray):
        B, n, p = z.shape
        self.p, self.q, self.n_off = p, p + 1, 2 * n - 1
        self.mask = mask.astype(float)
        count = self.mask.sum(axis=-1)  # (B, n) visible keys per query
        self.count = count
        safe = np.maximum(count, 1.0)[..., None]
        mu = np.einsum("bij,bjc->bic", self.mask, z) / safe  # (B, n, p) mean visible key
        self.w = self.mask[..., None] * (z[:, None, :, :] - mu[:, :, None, :])  # (B, n, n, p)
        self.zq = np.concatenate([z, np.ones((B, n, 1))], axis=-1)  # (B, n, q) query + constant
        i, j = np.indices((n, n))
        self.offset = i - j + n - 1  # (n, n) index of the relative position i − j
        w_rows = self.w.reshape(B * n, n, p)
        C = (w_rows.transpose(0, 2, 1) @ w_rows).reshape(B * n, p * p)  # Σ_j w wᵀ per query, as a GEMM
        zz = np.einsum("bia,bie->biae", self.zq, self.zq).reshape(B * n, self.q**2)
        G_KK = (zz.T @ C).reshape(self.q, self.q, p, p).transpose(0, 2, 1, 3).reshape(self.q * p, self.q * p)
        counts = self._scatter(self.mask)  # (B, n, n_off)
        G_PP = np.diag(counts.sum(axis=(0, 1))) - np.einsum(
            "bio,bie->oe", counts / np.maximum(count, 1.0)[..., None], counts
        )
        G_KP = np.einsum("bia,bioc->aco", self.zq, self._scatter(self.w)).reshape(self.q * p, self.n_off)
        self.G_KK, self.G_KP = G_KK, G_KP
        self.G_PP_pinv, self.dof_pos = _pinv(G_PP)  # factored once, shared by the heads of the layer
        self.G_pinv, self.dof_full = _pinv(np.block([[G_KK, G_KP], [G_KP.T, G_PP]]))
        self.n_eq = float(np.maximum(count - 1, 0).sum())  # centring uses one equation per query

    def _scatter(self, values: np.ndarray) -> np.ndarray:
        """Move key axis ``j`` of ``values (B, n, n, ...)`` to the offset axis ``i − j``."""
        B, n = values.shape[:2]
        out = np.zeros((B, n, self.n_off, *values.shape[3:]))
        rows = np.broadcast_to(np.arange(n)[:, None], (n, n))
        out[:, rows, self.offset] = values
        return out

    def centred_logits(self, A: np.ndarray) -> np.ndarray:
        """``log A`` centred over each query's visible keys, 0 elsewhere: ``(B, n, n)``."""
        logA = np.log(np.where(self.mask > 0, A, 1.0))
        mean = (self.mask * logA).sum(axis=-1, keepdims=True) / np.maximum(self.count, 1.0)[..., None]
        return self.mask * (logA - mean)

    def fit(self, A: np.ndarray, level: float = LEVEL) -> dict:
        """Fit one head's attention ``A (B, n, n)``; returns the columns and the kernel ``(q, p)``."""
        y = self.centred_logits(A)
        wy = (y[:, :, None, :] @ self.w)[:, :, 0]  # (B, n, p) Σ_j y_ij w_ij: a GEMM, not einsum's loops
        r_K = (self.zq.reshape(-1, self.q).T @ wy.reshape(-1, self.p)).ravel()
        r_P = self._scatter(y).sum(axis=(0, 1))
        total = float((y**2).sum())
        r = np.concatenate([r_K, r_P])
        theta = self.G_pinv @ r
        resid_full = max(total - float(theta @ r), 0.0)  # round-off can push an exact fit below 0
        resid_pos = self._residual_with_kernel(np.zeros_like(r_K), r_K, r_P, total)
        # overfit per parameter (residual variance): what a kernel of random logits would "explain"
        s2 = resid_full / max(self.n_eq - self.dof_full, 1.0)
        content = resid_pos - resid_full - s2 * (self.dof_full - self.dof_pos)
        if resid_pos <= _NO_CONTENT * total:  # position alone explains the head: no content kernel to fit
            resid_pos = content = 0.0
        kernel = theta[: self.q * self.p].reshape(self.q, self.p)
        adjusted = float("nan")
        if resid_pos > 0:
            adjusted = 1 - (resid_full / max(self.n_eq - self.dof_full, 1.0)) / (
                resid_pos / (self.n_eq - self.dof_pos)
            )
        return {
            "logit_field_position_explained": (total - resid_pos) / total if total > 0 else float("nan"),
            "logit_field_explained": adjusted,
            "logit_field_rank_90": self._rank_for(kernel, level, (r_K, r_P, total), resid_pos, content, s2),
            "logit_field_dims": self.p,
            "kernel": kernel,
        }

    def _residual_with_kernel(self, k: np.ndarray, r_K: np.ndarray, r_P: np.ndarray, total: float) -> float:
        """Residual sum of squares with the kernel fixed at ``k`` (flattened) and the position bias refitted."""
        r_pos = r_P - self.G_KP.T @ k
        best_pos = float(r_pos @ self.G_PP_pinv @ r_pos)
        return total - 2 * float(k @ r_K) + float(k @ self.G_KK @ k) - best_pos

    def _rank_for(self, kernel, level, rhs, resid_pos, content, s2) -> int:
        """Smallest k whose truncated kernel keeps ``level`` of the content variance, both net of the
        overfit ``s2`` per parameter (a rank-k kernel has k (q + p − k) parameters)."""
        if content <= 0:
            return 0
        U, s, Vt = np.linalg.svd(kernel, full_matrices=False)
        for k in range(1, len(s) + 1):
            truncated = (U[:, :k] * s[:k]) @ Vt[:k]
            kept = resid_pos - self._residual_with_kernel(truncated.ravel(), *rhs)
            if kept - s2 * k * (self.q + self.p - k) >= level * content:
                return k
        return len(s)


def visible_mask(A: np.ndarray, *, causal: bool) -> np.ndarray:
    """Keys each query may see (``j ≤ i`` when causal) where the attention is positive: ``(B, n, n)`` bool."""
    n = A.shape[-1]
    allowed = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    return allowed & (A > 0)


def fit_logit_field(x, A, *, causal: bool, max_dims: int = MAX_DIMS, level: float = LEVEL) -> dict:
    """Fit one head: ``x (B, n, d)`` the layer's normalised inputs, ``A (B, n, n)`` its attention
    (one window: ``(n, d)`` and ``(n, n)``). Returns ``{logit_field_explained, logit_field_rank_90,
    logit_field_position_explained, logit_field_dims, kernel (q, p) whitened, kernel_input (d, d)}``;
    ``kernel_input = W K_z Wᵀ`` is the kernel on ``x̃`` itself (exact when no dimension is dropped)."""
    x, A = np.asarray(x, dtype=float), np.asarray(A, dtype=float)
    x, A = (x[None], A[None]) if x.ndim == 2 else (x, A)
    if x.ndim != 3 or A.shape != (*x.shape[:2], x.shape[1]):
        raise DataError(f"Need x (B, n, d) and A (B, n, n). Got x {x.shape} and A {A.shape}.")
    z, W, _ = whiten(x, max_dims)
    out = LogitFieldSystem(z, visible_mask(A, causal=causal)).fit(A, level)
    out["kernel_input"] = W @ out["kernel"][: W.shape[1]] @ W.T
    return out


def fit_layer(x, A_heads, *, causal: bool, max_dims: int = MAX_DIMS, level: float = LEVEL) -> list[dict]:
    """Fit every head of one layer: ``x (B, n, d)``, ``A_heads (B, H, n, n)``; one system per distinct
    mask (usually one for the layer). Returns per-head dicts without the kernels."""
    x, A_heads = np.asarray(x, dtype=float), np.asarray(A_heads, dtype=float)
    z, _, _ = whiten(x, max_dims)
    systems: list[tuple[np.ndarray, LogitFieldSystem]] = []
    out = []
    for h in range(A_heads.shape[1]):
        mask = visible_mask(A_heads[:, h], causal=causal)
        system = next((s for m, s in systems if np.array_equal(m, mask)), None)
        if system is None:
            system = LogitFieldSystem(z, mask)
            systems.append((mask, system))
        fit = system.fit(A_heads[:, h], level)
        out.append({k: v for k, v in fit.items() if k != "kernel"})
    return out
