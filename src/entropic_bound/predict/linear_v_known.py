"""Linear QK teacher, V known: streaming least squares for K (E6, claim C9).

Model: ``Y_i = X_i K X_iᵀ X_i V + E_i`` (any scale of ``K``; ``c_lin/√d/n`` is absorbed into it),
i.e. ``Y_i = X_i K B_i`` with the known ``B_i = X_iᵀ X_i V (d, d_v)``. The target is linear in the
``d²`` entries of ``K``, solved by the accumulated normal equations of :mod:`.normal_equations`.
Identifiable iff ``G = Σ (X_iᵀX_i) ⊗ (B_i B_iᵀ)`` is non-singular (needs ``N·n·d_v ≥ d²``); the
noise level comes from the residual, ``σ̂² = RSS / (N n d_v − d²)``.
"""

from __future__ import annotations

import numpy as np

from .base import Fit, chunks, not_identifiable
from .goodness import REFITS, truncate
from .normal_equations import KronSystem, kernel_noise_draws, top_singular_values

NOISE_DRAWS = 16


def solve_kernel(system: KronSystem, rng: np.random.Generator, *, what: str) -> tuple[Fit, np.ndarray | None]:
    """Solve an accumulated :class:`KronSystem`: ``(Fit with K̂'s spectrum and noise draws, K̂ or None)``."""
    d = system.d
    n_eq, n_unk = system.n_equations, d * d
    if n_eq <= n_unk:
        return _no_kernel(
            f"{what}: {n_eq} equations (N·n·d_v) for {n_unk} unknowns (d²) leave no degrees of freedom; "
            f"need N·n·d_v > {n_unk}.",
            n_equations=n_eq,
            n_unknowns=n_unk,
            too_few_samples=True,
        )
    solved = system.solve()
    if solved is None:
        return _no_kernel(
            f"{what}: the normal matrix Σ (XᵢᵀXᵢ)⊗(BᵢBᵢᵀ) is singular, so K is not determined by these "
            "samples (add samples or vary X).",
            n_equations=n_eq,
            n_unknowns=n_unk,
        )
    K_hat, L, rss = solved
    sigma = float(np.sqrt(rss / (n_eq - n_unk)))
    E = kernel_noise_draws(L, sigma, rng, NOISE_DRAWS)  # (draws, d, d)
    return Fit(
        singular_values=np.linalg.svd(K_hat, compute_uv=False),
        noise_top=top_singular_values(E),
        sigma=sigma,
        entry_noise=float(np.sqrt(np.mean(E * E))),
        shape=(d, d),
        reason=f"{what}: K solved by least squares from {n_eq} equations for {n_unk} unknowns.",
        n_equations=n_eq,
        n_unknowns=n_unk,
    ), K_hat


def _no_kernel(reason: str, **counts) -> tuple[Fit, None]:
    return not_identifiable(reason, **counts), None


def split_systems(d: int, held: np.ndarray | None, N: int):
    """``{False: training, True: held-out}`` :class:`KronSystem` pair and the row masks per chunk."""
    held = np.zeros(N, dtype=bool) if held is None else held
    return {False: KronSystem(d), True: KronSystem(d)}, held


def add_split(systems: dict, held: np.ndarray, X: np.ndarray, B: np.ndarray, T: np.ndarray) -> None:
    """Add one chunk's samples to the training or the held-out system as ``held (c,)`` says."""
    for flag in (False, True):
        rows = held == flag
        if rows.any():
            systems[flag].add(X[rows], B[rows], T[rows])


def train_kernel(system: KronSystem) -> tuple[np.ndarray, np.ndarray] | None:
    """``(K̂, L)`` from the training samples alone (the goodness-of-fit model; ``L`` the Cholesky
    factor of their normal matrix), or ``None``."""
    if system.n_equations <= system.d**2:
        return None
    solved = system.solve()
    return None if solved is None else solved[:2]


def linear_model(K: np.ndarray | None, V: np.ndarray):
    """``(X_h, r) ↦ X_h K̂_r X_hᵀ X_h V`` (``K̂_r``: ``K`` truncated to rank r), or ``None``."""
    if K is None:
        return None

    def model(Xh: np.ndarray, r: int) -> np.ndarray:
        U = Xh @ V  # (N_h, n, d_v)
        return (Xh @ truncate(K, r) @ Xh.transpose(0, 2, 1)) @ U

    return model


def linear_error(trained: tuple[np.ndarray, np.ndarray] | None, sigma: float, V: np.ndarray):
    """The bootstrap of :func:`linear_model`'s estimation error (``Fit.heldout_error``), exact here:
    least squares on data simulated at rank ``r`` and noise σ̂ gives ``K̂* = K̂_r + σ̂ L⁻ᵀ z``
    whatever ``K̂_r``, so a refit is one Gaussian draw; ``(X_h, r, rng) ↦ ||Δ*_i||² (REFITS, N_h)``."""
    if trained is None:
        return None
    K, L = trained

    def error(Xh: np.ndarray, r: int, rng: np.random.Generator) -> np.ndarray:
        Kr = truncate(K, r)
        B = Xh.transpose(0, 2, 1) @ (Xh @ V)  # (N_h, d, d_v)
        out = np.empty((REFITS, Xh.shape[0]))
        for b, delta in enumerate(kernel_noise_draws(L, sigma, rng, REFITS)):  # (d, d) each
            Delta = (Xh @ (truncate(Kr + delta, r) - Kr)) @ B  # (N_h, n, d_v)
            out[b] = np.sum(Delta**2, axis=(1, 2))
        return out

    return error


def value_inputs(Xc: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``B_i = X_iᵀ X_i V`` of one chunk ``(c, d, d_v)``."""
    return Xc.transpose(0, 2, 1) @ (Xc @ V)


def known_gram(X: np.ndarray, V: np.ndarray) -> KronSystem:
    """The normal matrix of all samples, without targets: it depends on X and V alone, so every ``Y``
    on these inputs shares it and its Cholesky factor (:meth:`.KronSystem.with_same_gram`)."""
    system = KronSystem(X.shape[2])
    for sl in chunks(X.shape[0]):
        system.add_gram(X[sl], value_inputs(X[sl], V))
    return system


def linear_v_known(
    X: np.ndarray,
    Y: np.ndarray,
    V: np.ndarray | None,
    *,
    rng: np.random.Generator,
    held=None,
    gram: KronSystem | None = None,
) -> Fit:
    """``K̂ = argmin Σ ||Y_i − X_i K X_iᵀX_i V||²`` (streamed), spectrum of ``K̂``.

    Shapes: ``X (N, n, d)``, ``Y (N, n, d_v)``, ``V (d, d_v)`` (required); ``held (N,)`` marks the
    samples the goodness-of-fit model is fitted without. ``gram`` (:func:`known_gram` of the same X
    and V) reuses the normal matrix of other targets on these inputs; the samples are then summed in
    one system (the same numbers up to float64 round-off) and no held-out model is fitted.
    """
    if V is None:
        return not_identifiable("linear_v_known needs V (d, d_v); use linear_v_unknown without it.")
    what = "linear QK with V known"
    if gram is not None:
        system = gram.with_same_gram()
        for sl in chunks(X.shape[0]):
            system.add_target(X[sl], value_inputs(X[sl], V), Y[sl])
        return solve_kernel(system, rng, what=what)[0]
    systems, mask = split_systems(X.shape[2], held, X.shape[0])
    for sl in chunks(X.shape[0]):
        Xc = X[sl]
        add_split(systems, mask[sl], Xc, value_inputs(Xc, V), Y[sl])
    fit = solve_kernel(systems[False].merged(systems[True]), rng, what=what)[0]
    if held is not None and fit.identifiable:
        trained = train_kernel(systems[False])
        fit.heldout_model = linear_model(None if trained is None else trained[0], V)
        fit.heldout_error = linear_error(trained, fit.sigma, V)
    return fit
