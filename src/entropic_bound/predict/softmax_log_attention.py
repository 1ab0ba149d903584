"""Softmax teacher, exact where identifiable: the row-centred log of recovered attention (X1).

Model ``Y_i = A_i X_i V + E_i``, ``A_i = softmax(X_i K X_iᵀ)`` row-wise, K of any scale, V known.

1. **Recover A_i.** With ``U_i = X_i V (n, d_v)`` of full row rank (needs ``n ≤ d_v``,
   ``n ≤ d``, ``rank V ≥ n``), ``Â_i = Y_i pinv(U_i) = A_i + E_i pinv(U_i)`` — exact at σ = 0.
   The noise of entry ``(s, t)`` has std ``δ_st = σ ||pinv(U_i)[:, t]||``.
2. **Linearise.** ``log A_st − log A_sm = x_sᵀ K (x_t − x_m)`` for the row's largest entry ``m``
   (log-ratios cancel the row normaliser; using the largest entry keeps the reference reliable).
   This is linear in ``vec K`` with feature ``x_s ⊗ (x_t − x_m)``.
3. **Mask and weight.** Entries with ``Â_st ≤ 3 δ_st`` are dropped (their log is noise); the rest get
   weights ``1 / (δ_st²/Â_st² + δ_sm²/Â_sm²)`` (delta method). A second pass takes the mask, the
   weights and the references from the fitted ``softmax(X_i K̂₀ X_iᵀ)`` instead of the noisy ``Â``
   (iteratively reweighted; removes the selection bias of masking on noisy values; the first pass
   reads at most ``FIRST_PASS_SAMPLES`` training samples), giving the weighted least squares
   ``G vec K̂ = b``, ``G = Σ w φ φᵀ`` (``d² × d²``, streamed by :mod:`.log_ratios`, solved to float64
   accuracy from a float32 ``G`` by :mod:`.log_ratio_system`).
4. **Null.** The weights ignore the correlations of the noise of ``Â_i`` (through ``P_iᵀP_i``) and of
   log-ratios sharing a reference, so ``G⁻¹`` understates ``Cov(K̂)``; the cut's null instead pushes
   fresh noise ``E_i`` through the same equations and weights (:func:`.log_ratios.null_draws`).

σ̂ is model-free: from the part of ``Y_i`` outside ``row(U_i)`` (``N n (d_v − n)`` dof) and from
the row sums of ``Â_i``, which must be 1 (``N n`` dof, so ``n = d_v`` works too), on the first-pass
samples. ``Â_i`` comes from a QR of ``U_iᵀ`` (backward stable; an SVD-based pinv costs 5× more). Identifiable when ``n ≤ min(d, d_v)``, ``rank V ≥ n`` and the unmasked equations
determine K (``G`` non-singular). Reference: docs/claims.md § X1 (prototype: exact at σ = 0, N ≥ 8, and at
σ = 0.01, N = 128 with n = 16, d = 32).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from .base import Fit, chunks, not_identifiable
from .goodness import truncate
from .log_ratio_system import LogRatioSystem
from .log_ratios import MASK_LEVELS, bootstrap_rhs, equations, null_draws
from .normal_equations import top_singular_values

FIRST_PASS_SAMPLES = 512
NOISE_DRAWS = 16
# Refits of the goodness-of-fit bootstrap (each a pass over the training equations, like a null draw).
BOOTSTRAP_REFITS = 16
# The null is simulated on the first NULL_SAMPLES (training) samples and scaled by √(N / NULL_SAMPLES):
# b_k is a sum of independent per-sample terms, and 10⁵–10⁶ log-ratio equations (n = 16…32) pin its
# covariance down.
NULL_SAMPLES = 1024
# 64 samples keep the (c n, T) triangle arrays (4 MB) in cache: measured 1.45× less CPU than 256
CHUNK_SAMPLES = 64


def pinv_rows(U: torch.Tensor) -> torch.Tensor:
    """``pinv(U_i)`` for ``U (c, n, d_v)`` of full row rank → ``(c, d_v, n)``: ``U_i⁻¹`` when square,
    else ``Q R⁻ᵀ`` from ``U_iᵀ = Q R`` (LAPACK's batched solve; torch's batched triangular solve was
    measured 10× slower here)."""
    if U.shape[1] == U.shape[2]:
        return torch.from_numpy(np.linalg.inv(U.numpy()))
    Q, R = torch.linalg.qr(U.transpose(1, 2))  # (c, d_v, n), (c, n, n)
    return torch.from_numpy(np.linalg.solve(R.numpy(), Q.transpose(1, 2).numpy())).transpose(1, 2)


@dataclasses.dataclass
class Recovered:
    """``Â (c, n, n)``, ``P = pinv(U) (c, d_v, n)``, column noise factors ``||P[:, t]|| (c, n)`` and
    the inputs ``U = X V``, ``Y`` for :meth:`noise_residuals`."""

    A: torch.Tensor
    P: torch.Tensor
    col: torch.Tensor
    U: torch.Tensor
    Y: torch.Tensor

    def noise_residuals(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``Y`` outside ``row(U_i)`` ``(c, n, d_v)`` and the row sums ``(Â_i 1 − 1) / ||P_i 1|| (c, n)``
        (softmax rows sum to one, so both are iid ``N(0, σ²)`` under the softmax teacher)."""
        rowsum = (self.A.sum(dim=2) - 1.0) / torch.linalg.norm(self.P.sum(dim=2), dim=1)[:, None]
        return self.Y - self.A @ self.U, rowsum


def recover(X: torch.Tensor, Y: torch.Tensor, V: torch.Tensor) -> Recovered:
    U = X @ V  # (c, n, d_v)
    P = pinv_rows(U)
    return Recovered(Y @ P, P, torch.linalg.norm(P, dim=1), U, Y)


@dataclasses.dataclass
class Inverses:
    """``U = X V (N, n, d_v)``, ``P = pinv(U) (N, d_v, n)`` and the column factors ``(N, n)`` of every
    sample: they depend on X and V alone, so every ``Y`` on these inputs shares them."""

    U: torch.Tensor
    P: torch.Tensor
    col: torch.Tensor

    @classmethod
    def of(cls, X: np.ndarray, V: np.ndarray) -> Inverses:
        Vt, parts = _t(V), []
        for sl in chunks(X.shape[0], CHUNK_SAMPLES):
            U = _t(X[sl]) @ Vt
            P = pinv_rows(U)
            parts.append((U, P, torch.linalg.norm(P, dim=1)))
        return cls(*(torch.cat(p) for p in zip(*parts)))

    def take(self, rows: np.ndarray) -> Inverses:
        """The samples ``rows`` (indices)."""
        index = torch.from_numpy(np.asarray(rows, dtype=np.int64))
        return Inverses(self.U[index], self.P[index], self.col[index])

    def recover(self, rows, Y: torch.Tensor) -> Recovered:
        """:func:`recover` of samples ``rows`` (indices or a slice) with targets ``Y``."""
        rows = rows if isinstance(rows, slice) else torch.from_numpy(np.asarray(rows, dtype=np.int64))
        P = self.P[rows]
        return Recovered(Y @ P, P, self.col[rows], self.U[rows], Y)


def _recoveries(X, Y, V, inverses: Inverses | None) -> list[Recovered]:
    """:func:`recover` chunk by chunk (from ``inverses`` of the same X when given)."""
    Vt = _t(V)
    return [
        recover(_t(X[sl]), _t(Y[sl]), Vt) if inverses is None else inverses.recover(sl, _t(Y[sl]))
        for sl in chunks(X.shape[0], CHUNK_SAMPLES)
    ]


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))


def recover_attention(X: np.ndarray, Y: np.ndarray, V: np.ndarray):
    """Numpy view of :func:`recover`: ``(Â, column factors, Y outside row(U), row-sum residuals)``."""
    rec = recover(_t(X), _t(Y), _t(V))
    resid, rowsum = rec.noise_residuals()
    return rec.A.numpy(), rec.col.numpy(), resid.numpy(), rowsum.numpy()


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``(..., n, n)`` logits."""
    A = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return A / A.sum(axis=-1, keepdims=True)


def _sigma_from(recs: list[Recovered], n: int, d_v: int) -> tuple[float, int]:
    ss = sum(float(sum((t**2).sum() for t in r.noise_residuals())) for r in recs)
    dof = sum(r.A.shape[0] for r in recs) * n * (d_v - n + 1)
    return float(np.sqrt(ss / dof)), dof


def estimate_sigma(X, Y, V) -> tuple[float, int]:
    """σ̂ from the model-free residuals of :func:`recover`, and its degrees of freedom."""
    return _sigma_from(_recoveries(X, Y, V, None), X.shape[1], Y.shape[2])


def _pass(X, Y, V, sigma, *, K_ref=None, held=None, rng=None, draws=0, inverses=None) -> LogRatioSystem:
    """Stream the weighted system over chunks; mask, weights and references from ``K_ref`` if given
    (``inverses``: :class:`Inverses` of the same X, else computed per chunk)."""
    Vt, d = _t(V), X.shape[2]
    scale = float(np.max(np.abs(Y)))
    system = LogRatioSystem(d, draws)
    held = np.zeros(X.shape[0], dtype=bool) if held is None else held
    order = np.argsort(held, kind="stable")  # training samples first: a chunk is one part, no row copies
    for sl in chunks(X.shape[0], CHUNK_SAMPLES):
        Xc, Yc = _t(X[order[sl]]), _t(Y[order[sl]])
        rec = recover(Xc, Yc, Vt) if inverses is None else inverses.recover(order[sl], Yc)
        A_ref = rec.A if K_ref is None else torch.softmax(Xc @ K_ref @ Xc.transpose(1, 2), dim=2)
        eq = equations(Xc, rec.A, A_ref, rec.col, sigma, scale)
        system.add(Xc, eq, torch.from_numpy(held[order[sl]]))
        if draws and sl.start < NULL_SAMPLES:
            system.null += null_draws(Xc, rec.P, eq, sigma, rng, draws)
    if draws:
        system.null *= np.sqrt(X.shape[0] / min(X.shape[0], NULL_SAMPLES))  # a multiple of CHUNK_SAMPLES
    return system


def check_setting(X, Y, V) -> str:
    """Why A_i cannot be recovered from these shapes and this V (empty when it can)."""
    N, n, d = X.shape
    d_v = Y.shape[2]
    if V is None:
        return (
            "softmax, V unknown: A_i X_i V cannot be split into A_i and V per sample, so the attention "
            "matrices (and with them K) are not recovered; use softmax_linearised for the paper's estimates."
        )
    if n > min(d, d_v):
        return (
            f"softmax with n = {n} > min(d, d_v) = {min(d, d_v)}: U_i = X_i V has rank < n, so A_i is not "
            "recoverable from Y_i = A_i U_i (the exact method needs n ≤ min(d, d_v))."
        )
    if np.linalg.matrix_rank(V) < n:
        return f"softmax: rank V = {np.linalg.matrix_rank(V)} < n = {n}, so A_i is not recoverable from Y_i = A_i X_i V."
    return ""


def _first_pass(X, Y, V, held, inverses=None):
    """σ̂ and a first kernel from up to ``FIRST_PASS_SAMPLES`` training samples."""
    train = (
        np.flatnonzero(~held)[:FIRST_PASS_SAMPLES]
        if held is not None
        else np.arange(len(X))[:FIRST_PASS_SAMPLES]
    )
    Xf, Yf = X[train], Y[train]
    inverses = None if inverses is None else inverses.take(train)
    sigma, dof = _sigma_from(_recoveries(Xf, Yf, V, inverses), X.shape[1], Y.shape[2])
    first = _pass(Xf, Yf, V, sigma, inverses=inverses).solve(refine=False)  # K0 places masks and references
    return sigma, dof, None if first is None else first.K


def _with_constraint(fit: Fit, V: np.ndarray) -> Fit:
    fit.heldout_constraint = _rowsum_constraint(V)
    return fit


def _heldout_model(K_train: torch.Tensor | None, V: np.ndarray):
    """``(X_h, r) ↦ softmax(X_h K̂_r X_hᵀ) X_h V`` with ``K̂_r`` the training fit truncated to rank r."""
    if K_train is None:
        return None

    def model(Xh: np.ndarray, r: int) -> np.ndarray:
        Kr = truncate(K_train.numpy(), r)
        return softmax_rows(Xh @ Kr @ Xh.transpose(0, 2, 1)) @ (Xh @ V)

    return model


def _heldout_error(system: LogRatioSystem, solution, V: np.ndarray, sigma: float):
    """The parametric bootstrap of :func:`_heldout_model`'s estimation error (``Fit.heldout_error``):
    ``BOOTSTRAP_REFITS`` training sets simulated from the fitted ``softmax(X_i K̂_r X_iᵀ) X_i V`` at σ̂,
    each refitted through the fit's own mask, weights and references with the exact logs
    (:func:`.log_ratios.bootstrap_rhs`; the bias of the log of a noisy entry, which the cut's
    first-order null leaves out, dominates the error of a saturated fit) and truncated to rank r;
    ``(X_h, r, rng) ↦ ||Δ*_i||² (BOOTSTRAP_REFITS, N_h)``."""
    if solution.K_train is None:
        return None
    Vt = _t(V)

    def error(Xh: np.ndarray, r: int, rng: np.random.Generator) -> np.ndarray:
        Kr = _t(truncate(solution.K_train.numpy(), r))
        rhs = torch.zeros(BOOTSTRAP_REFITS, system.d, system.d, dtype=torch.float64)
        for X, w, m in system.training_blocks():
            A_true = torch.softmax(X @ Kr @ X.transpose(1, 2), dim=2)
            rhs += bootstrap_rhs(X, pinv_rows(X @ Vt), w, m, A_true, sigma, rng, BOOTSTRAP_REFITS)
        refits = torch.cholesky_solve(rhs.reshape(BOOTSTRAP_REFITS, -1).T, solution.L_train).T
        U = Xh @ V  # (N_h, n, d_v)
        fitted = softmax_rows(Xh @ Kr.numpy() @ Xh.transpose(0, 2, 1)) @ U
        out = np.empty((BOOTSTRAP_REFITS, Xh.shape[0]))
        for b, K_b in enumerate(refits.reshape(-1, system.d, system.d).numpy()):
            refit = softmax_rows(Xh @ truncate(K_b, r) @ Xh.transpose(0, 2, 1)) @ U
            out[b] = np.sum((refit - fitted) ** 2, axis=(1, 2))
        return out

    return error


def _rowsum_constraint(V: np.ndarray):
    """``(X_h, Y_h) ↦`` the row sums ``(Â_i 1 − 1) / ||P_i 1||`` (``N(0, σ²)`` under any softmax teacher)."""

    def constraint(Xh: np.ndarray, Yh: np.ndarray) -> tuple[np.ndarray, str, int]:
        Vt = _t(V)
        parts = [recover(_t(Xh[sl]), _t(Yh[sl]), Vt).noise_residuals()[1] for sl in chunks(Xh.shape[0])]
        R = torch.cat(parts).numpy()  # (N_h, n)
        return R, "row sums of the recovered attention (softmax rows sum to one)", R.shape[1]

    return constraint


def softmax_log_attention(
    X: np.ndarray,
    Y: np.ndarray,
    V: np.ndarray | None,
    *,
    rng: np.random.Generator,
    held=None,
    inverses: Inverses | None = None,
    heldout_model: bool = True,
) -> Fit:
    """Kernel estimate from recovered attention (module docstring). ``X (N, n, d)``, ``Y (N, n, d_v)``,
    ``V (d, d_v)``; ``held (N,)`` marks samples kept out of the goodness-of-fit model. ``inverses``
    (:meth:`Inverses.of` the same X and V) shares ``pinv(X_i V)`` with other targets on these inputs;
    ``heldout_model=False`` skips the training-only fit the goodness-of-fit test reads (the rank and
    every other number stay the same up to float64 round-off)."""
    N, n, d = X.shape
    n_unk = d * d
    why = check_setting(X, Y, V)
    if why:
        return not_identifiable(why, n_equations=N * n * (n - 1), n_unknowns=n_unk)
    if N * n * (n - 1) <= n_unk:
        return not_identifiable(
            f"softmax log-attention: {N * n * (n - 1)} log-ratio equations (N·n·(n−1)) for {n_unk} unknowns (d²); "
            f"need N·n·(n−1) > {n_unk}.",
            n_equations=N * n * (n - 1),
            n_unknowns=n_unk,
            too_few_samples=True,
        )
    sigma, dof, K0 = _first_pass(X, Y, V, held, inverses)
    # second pass: mask, weights and references from the fitted attention (the first pass's choice
    # from noisy Â biases the kept logs upward); at σ̂ = 0 there is no selection to undo
    ref = K0 if (K0 is not None and sigma > 0) else None
    system = _pass(X, Y, V, sigma, K_ref=ref, held=held, rng=rng, draws=NOISE_DRAWS, inverses=inverses)
    solution = system.solve(with_training=held is not None and heldout_model)
    if solution is None or system.kept <= n_unk:
        return _with_constraint(
            not_identifiable(
                f"softmax log-attention: after masking attention entries below {MASK_LEVELS:g} noise levels "
                f"(σ̂ = {sigma:.3g}), {system.kept} equations do not determine the {n_unk} entries of K "
                "(noise too large, attention too saturated or too few samples).",
                n_equations=system.kept,
                n_unknowns=n_unk,
                sigma=sigma,
            ),
            V,
        )
    E = system.noise(solution.L)  # (draws, d, d)
    how = f"Y outside row(X_i V) and the row sums of Â_i ({dof} dof)"
    return Fit(
        singular_values=np.linalg.svd(solution.K.numpy(), compute_uv=False),
        noise_top=top_singular_values(E),
        sigma=sigma,
        entry_noise=float(np.sqrt(np.mean(E * E))),
        shape=(d, d),
        reason=f"softmax, V known, n ≤ d_v: attention recovered per sample, K̂ from {system.kept} weighted "
        f"log-ratios; σ̂ from {how}.",
        n_equations=system.kept,
        n_unknowns=n_unk,
        heldout_model=_heldout_model(solution.K_train, V),
        heldout_error=_heldout_error(system, solution, V, sigma),
    )
