"""C7's measurements: the estimator chosen on the ground truth K*, and the minimum-norm kernel of
each under-identified data set.

The estimator is fixed from the config alone, before any run is read, as C3's
(``e2_recovery/recovery.py``): for every ``(r*, spectrum)`` of the grid, ``K*``'s singular values (the
spectrum scaled to ``||K*||_F = c√d``) and, at every identified ``N`` (``N·n >= d``), ``K*`` plus the
noise a least-squares fit of ``N`` samples at the runs' ``σ`` puts into ``K`` go to
:func:`~entropic_bound.stats.estimator_choice.choose_estimator`. The fit is the linear teacher's
(``Y_b = X_b K Z_b + E_b``, ``Z_b = X_bᵀX_b V / (√d n)``, V known): it is linear in ``K``, so its noise
is exact; the softmax teacher's kernel enters through the same logits and its noise is taken at that
level.

The minimum-norm kernel of a data set is the minimum-Frobenius-norm least-squares solution of the
problem linearised at ``K = 0``, where GD from vanishing init starts: for the linear teacher the
problem itself; for the softmax teacher ``softmax(L) ≈ 11ᵀ/n + L C/n`` (``C`` the centring matrix),
so ``Y_b − 1 x̄_bᵀ V ≈ X_b K Z̃_b`` with ``Z̃_b = X_bᵀ C X_b V / (√d n)``. GD on a linear least-squares
problem from init 0 converges to that solution: it is the answer the data alone force. ``V`` is the
teacher's ``V*`` (for learned-V runs too).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import scipy.linalg

from ...spectra import estimate_all, singular_values
from ...stats.estimator_choice import ground_truth_cases, rule_evidence
from ...tasks.operators import make_spectrum
from ..framework.draws import Seeds

NOISE_DRAWS = 200  # per identified N (shared by the truths): a failure rate near 1 % is seen on every draw
NOISE_DESIGNS = 10  # random designs they are drawn on (one factorisation each)


def truth_kernel_spectrum(d: int, r_star: int, spectrum: str, decay: float, c: float) -> np.ndarray:
    """``K*``'s singular values, ``(d,)``: the named profile scaled to ``||K*||_F = c√d``, zeros past ``r*``."""
    s = make_spectrum(r_star, spectrum, decay=decay)
    out = np.zeros(d)
    out[:r_star] = s * c * np.sqrt(d) / np.linalg.norm(s)
    return out


def kernel_design(X: np.ndarray, V: np.ndarray, kind: str) -> np.ndarray:
    """``Z_b`` (``(N, d, d_v)``) of the problem ``Y_b ≈ X_b K Z_b`` linearised at ``K = 0``."""
    N, n, d = X.shape
    if kind == "softmax":
        C = np.eye(n) - np.full((n, n), 1.0 / n)
        return np.einsum("bia,ij,bjc,ce->bae", X, C, X, V) / (np.sqrt(d) * n)
    return np.einsum("bia,bic,ce->bae", X, X, V) / (np.sqrt(d) * n)


def kernel_target(X: np.ndarray, Y: np.ndarray, V: np.ndarray, kind: str) -> np.ndarray:
    """The part of ``Y`` linear in ``K``: ``Y`` (linear teacher), ``Y − 1 x̄ᵀV`` (softmax at ``K = 0``)."""
    if kind == "softmax":
        return Y - (X.mean(1, keepdims=True) @ V)
    return Y


def min_norm_kernel(X: np.ndarray, Y: np.ndarray, V: np.ndarray, kind: str) -> np.ndarray:
    """The minimum-norm least-squares ``K`` (``d × d``) of ``X_b K Z_b = target_b`` over the data set.

    ``vec(X K Z) = (Zᵀ ⊗ X) vec(K)`` (column-major), stacked over samples and solved by ``lstsq``
    (its minimum-norm solution)."""
    d = X.shape[-1]
    Z, T = kernel_design(X, V, kind), kernel_target(X, Y, V, kind)
    if len(X) == 1:  # one sample: the minimum-norm solution of X K Z = T is X⁺ T Z⁺ (no d² × d² system)
        return np.linalg.pinv(X[0]) @ T[0] @ np.linalg.pinv(Z[0])
    design = np.concatenate([np.kron(z.T, x) for x, z in zip(X, Z)])  # (N·n·d_v, d²)
    target = np.concatenate([t.reshape(-1, order="F") for t in T])
    k = np.linalg.lstsq(design, target, rcond=None)[0]
    return k.reshape(d, d, order="F")


def min_norm_estimates(X, Y, V, kind: str) -> dict[str, float]:
    """Every panel estimate of :func:`min_norm_kernel`'s spectrum: ``{min_norm_<key>: value}``."""
    K = min_norm_kernel(np.asarray(X, float), np.asarray(Y, float), np.asarray(V, float), kind)
    return {f"min_norm_{k}": float(v) for k, v in estimate_all(singular_values(K), shape=K.shape).items()}


def ls_kernel_noise(
    n: int, d: int, n_samples: int, sigma: float, rng: np.random.Generator, draws: int = 1
) -> list[np.ndarray]:
    """``draws`` samples of the noise a least-squares fit of one data set of the linear teacher puts
    into ``K`` (``d × d``), on one random design: the fit solves the normal equations
    ``Σ_b (Z_b Z_bᵀ ⊗ X_bᵀ X_b) vec(E) = vec(Σ_b X_bᵀ G_b Z_bᵀ)``, whose right side is Gaussian with
    covariance ``σ² · normal``, so ``vec(E) ~ N(0, σ² normal⁻¹) = σ L⁻ᵀ w`` with ``normal = L Lᵀ``:
    many samples cost one factorisation."""
    X = rng.standard_normal((n_samples, n, d))
    V = np.linalg.qr(rng.standard_normal((d, d)))[0]
    Z = kernel_design(X, V, "linear")  # (N, d, d)
    ZZ, XX = Z @ Z.transpose(0, 2, 1), X.transpose(0, 2, 1) @ X  # (N, d, d) each
    normal = (ZZ.reshape(n_samples, -1).T @ XX.reshape(n_samples, -1)).reshape(d, d, d, d)
    normal = normal.transpose(0, 2, 1, 3).reshape(d * d, d * d)  # Σ_b ZZ_b ⊗ XX_b
    L = np.linalg.cholesky(normal)
    w = rng.standard_normal((d * d, draws))
    E = sigma * scipy.linalg.solve_triangular(L.T, w, lower=False)  # (d², draws)
    return [E[:, k].reshape(d, d, order="F") for k in range(draws)]


def _noise_draws(n: int, d: int, n_samples: int, sigma: float, rng: np.random.Generator) -> list:
    """:data:`NOISE_DRAWS` fit noises over :data:`NOISE_DESIGNS` random designs."""
    per_design = NOISE_DRAWS // NOISE_DESIGNS
    return [E for _ in range(NOISE_DESIGNS) for E in ls_kernel_noise(n, d, n_samples, sigma, rng, per_design)]


def estimator_rule(cfg, seeds: Seeds) -> dict:
    """The rule's outcome on the config's grid of truths (the keys of C3's ``estimator_rule``)."""
    t = cfg.task
    counts = tuple(sorted({cfg.train.n_samples, *cfg.c7_sample_counts}))
    return _rule(t.n, t.d, t.sigma, t.decay, t.c, tuple(t.r_stars), tuple(t.spectra), counts, seeds.moved(0))


@lru_cache(maxsize=16)
def _rule(n, d, sigma, decay, c, r_stars, spectra, counts, seed) -> dict:
    rng = np.random.default_rng(seed)  # the noise cases move with the draw, as the runs do
    identified = [N for N in counts if N * n >= d]
    noises = {N: _noise_draws(n, d, N, sigma, rng) for N in identified}
    cases, labels, fraction = [], [], {}
    for r in r_stars:
        for sp in spectra:
            s = truth_kernel_spectrum(d, r, sp, decay, c)
            cases += ground_truth_cases(np.diag(s), r)
            labels.append((f"r*={r}, {sp}", True))
            for N, draws in noises.items() if sigma > 0 else ():
                for E in draws:
                    fraction.setdefault(str(N), []).append(np.linalg.norm(E, 2) / s[0])
                    cases.append(
                        {"singular_values": singular_values(np.diag(s) + E), "r_star": r, "shape": (d, d)}
                    )
                    labels.append((f"r*={r}, {sp}", False))
    return {
        **rule_evidence(cases, labels, fraction),
        "noise_model": "least-squares fit of the linear teacher (V known) at identified N, for both teachers",
    }


def c7_estimator(cfg, seeds: Seeds) -> str:
    """C7's estimator key: ``verdict.c7_estimator`` where set by hand, else the rule's choice."""
    return cfg.verdict.c7_estimator or estimator_rule(cfg, seeds)["estimator"]
