"""Spectra: batched float64 singular values (dense and factored) and rank estimators.

Every estimator is declared (lazily, by ``module:object``) in :data:`entropic_bound.registry.ESTIMATORS`.
The names below are imported from their modules on first use, so importing :mod:`.names` (what
an experiment's config reads) imports no estimator and no torch.
"""

from __future__ import annotations

from ..lazy_exports import lazy_package

#: each (relative) module → the public names it defines, imported on first use
__getattr__, __all__ = lazy_package(
    __name__,
    {
        ".estimators": (
            "Estimator",
            "energy_effective_rank",
            "energy_threshold_rank",
            "entropy_effective_rank",
            "largest_gap_rank",
            "numerical_rank",
            "optimal_hard_threshold",
            "participation_ratio",
            "stable_rank",
        ),
        ".marchenko_pastur": ("lambda_star", "mp_cdf", "mp_median", "omega", "omega_approx"),
        ".panel": (
            "ESTIMATOR_KEYS",
            "KNOWN_NOISE_KEY",
            "PANEL",
            "estimate_all",
            "panel_description",
            "round_estimate",
        ),
        ".svd": ("as_float64_tensor", "factored_singular_values", "singular_values"),
    },
)
