"""Spectra: batched float64 singular values (dense and factored) and rank estimators.

Every estimator is declared (lazily, by ``module:object``) in :data:`entropic_bound.registry.ESTIMATORS`.
"""

from __future__ import annotations

from .estimators import (
    Estimator,
    energy_effective_rank,
    energy_threshold_rank,
    entropy_effective_rank,
    largest_gap_rank,
    numerical_rank,
    optimal_hard_threshold,
    participation_ratio,
    stable_rank,
)
from .marchenko_pastur import lambda_star, mp_cdf, mp_median, omega, omega_approx
from .panel import ESTIMATOR_KEYS, KNOWN_NOISE_KEY, PANEL, estimate_all, panel_description, round_estimate
from .svd import as_float64_tensor, factored_singular_values, singular_values

__all__ = [
    "ESTIMATOR_KEYS",
    "Estimator",
    "KNOWN_NOISE_KEY",
    "PANEL",
    "as_float64_tensor",
    "energy_effective_rank",
    "energy_threshold_rank",
    "entropy_effective_rank",
    "estimate_all",
    "factored_singular_values",
    "lambda_star",
    "largest_gap_rank",
    "mp_cdf",
    "mp_median",
    "numerical_rank",
    "omega",
    "omega_approx",
    "optimal_hard_threshold",
    "panel_description",
    "participation_ratio",
    "round_estimate",
    "singular_values",
    "stable_rank",
]
