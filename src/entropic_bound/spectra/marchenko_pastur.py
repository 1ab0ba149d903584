"""Marchenko–Pastur constants behind the Gavish–Donoho optimal hard threshold.

Reference: M. Gavish and D. L. Donoho, "The Optimal Hard Threshold for Singular Values is 4/√3",
IEEE Trans. Inf. Theory 60(8), 2014.

Notation: an ``m × N`` matrix with ``m <= N`` (``N`` = N_large, the *larger* dimension) and aspect
ratio ``β = m / N ∈ (0, 1]``. Noise ``Z`` has iid ``N(0, σ²)`` entries. The eigenvalues of
``Z Zᵀ / (N σ²)`` follow the Marchenko–Pastur law with ratio β, density

    f_β(x) = sqrt((b − x)(x − a)) / (2π β x),   a = (1 − √β)²,  b = (1 + √β)²,

whose median ``μ_β`` calibrates the unknown-noise threshold.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..errors import UserInputError


def _check_beta(beta: float) -> float:
    beta = float(beta)
    if not (0.0 < beta <= 1.0):
        raise UserInputError(f"The 'beta' parameter must be a float in (0, 1]. Got {beta!r} instead.")
    return beta


def _mp_cdf_theta(theta: float, beta: float) -> float:
    """MP(β) CDF at ``x = a + (b − a) sin²θ``, for ``θ ∈ [0, π/2]``.

    The substitution turns ``sqrt((b − x)(x − a)) dx`` into ``2 (b − a)² sin²θ cos²θ dθ``, which
    removes the endpoint singularities (including the ``1/√x`` one at β = 1), so plain quadrature
    is accurate to ~1e-14.
    """
    a, b = (1 - math.sqrt(beta)) ** 2, (1 + math.sqrt(beta)) ** 2
    width = b - a

    def integrand(t: float) -> float:
        s2, c2 = math.sin(t) ** 2, math.cos(t) ** 2
        return 2 * width**2 * s2 * c2 / (2 * math.pi * beta * (a + width * s2))

    from scipy import integrate  # imported on first use: scipy costs ~1 s at start-up

    value, _ = integrate.quad(integrand, 0.0, theta, epsabs=1e-14, epsrel=1e-13)
    return value


@lru_cache(maxsize=1024)
def _mp_median_cached(beta: float) -> float:
    from scipy import optimize

    theta = optimize.brentq(lambda t: _mp_cdf_theta(t, beta) - 0.5, 0.0, math.pi / 2, xtol=1e-15)
    a, b = (1 - math.sqrt(beta)) ** 2, (1 + math.sqrt(beta)) ** 2
    return a + (b - a) * math.sin(theta) ** 2


def mp_cdf(x: float, beta: float) -> float:
    """CDF of the Marchenko–Pastur law with ratio ``β ∈ (0, 1]`` and unit variance, at ``x``."""
    beta = _check_beta(beta)
    a, b = (1 - math.sqrt(beta)) ** 2, (1 + math.sqrt(beta)) ** 2
    if x <= a:
        return 0.0
    if x >= b:
        return 1.0
    return _mp_cdf_theta(math.asin(math.sqrt((x - a) / (b - a))), beta)


def mp_median(beta: float) -> float:
    """Median ``μ_β`` of the Marchenko–Pastur law (ratio β, unit variance), solved numerically, cached."""
    return _mp_median_cached(_check_beta(beta))


def lambda_star(beta: float) -> float:
    """Known-noise optimal threshold coefficient (Gavish & Donoho 2014, eq. (11)).

        λ*(β) = sqrt(2(β + 1) + 8β / ((β + 1) + sqrt(β² + 14β + 1)))

    ``λ*(1) = 4/√3``. The threshold on singular values is ``λ*(β) · √N_large · σ``.
    """
    beta = _check_beta(beta)
    return math.sqrt(2 * (beta + 1) + 8 * beta / ((beta + 1) + math.sqrt(beta**2 + 14 * beta + 1)))


def omega(beta: float) -> float:
    """Unknown-noise coefficient ``ω(β) = λ*(β) / sqrt(μ_β)``; threshold ``ω(β) · median(σ_i)``.

    With ``σ̂ = median(σ_i) / sqrt(N_large · μ_β)`` (Gavish & Donoho 2014, eq. (20)) the known-noise
    threshold ``λ*(β) √N_large σ̂`` becomes ``ω(β) · median(σ_i)``. ``ω(1) ≈ 2.858``.
    """
    return lambda_star(beta) / math.sqrt(mp_median(beta))


def omega_approx(beta: float) -> float:
    """Gavish & Donoho's cubic fit ``ω(β) ≈ 0.56β³ − 0.95β² + 1.82β + 1.43`` (a cross-check only)."""
    beta = _check_beta(beta)
    return 0.56 * beta**3 - 0.95 * beta**2 + 1.82 * beta + 1.43
