"""Spectra: batched float64 singular values (dense and factored) and rank estimators.

Every estimator is declared (lazily, by ``module:object``) in :data:`entropic_bound.registry.ESTIMATORS`.
The names below are imported from their modules on first use, so importing :mod:`.names` (what
an experiment's config reads) imports no estimator and no torch.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

#: each public name → the module that defines it
_HOMES = {
    "Estimator": ".estimators",
    "energy_effective_rank": ".estimators",
    "energy_threshold_rank": ".estimators",
    "entropy_effective_rank": ".estimators",
    "largest_gap_rank": ".estimators",
    "numerical_rank": ".estimators",
    "optimal_hard_threshold": ".estimators",
    "participation_ratio": ".estimators",
    "stable_rank": ".estimators",
    "lambda_star": ".marchenko_pastur",
    "mp_cdf": ".marchenko_pastur",
    "mp_median": ".marchenko_pastur",
    "omega": ".marchenko_pastur",
    "omega_approx": ".marchenko_pastur",
    "ESTIMATOR_KEYS": ".panel",
    "KNOWN_NOISE_KEY": ".panel",
    "PANEL": ".panel",
    "estimate_all": ".panel",
    "panel_description": ".panel",
    "round_estimate": ".panel",
    "as_float64_tensor": ".svd",
    "factored_singular_values": ".svd",
    "singular_values": ".svd",
}

__getattr__ = lazy_exports(__name__, _HOMES)

__all__ = list(_HOMES)
