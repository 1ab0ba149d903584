"""Closed forms for the linear surrogate: tail energy, minimum excess risk, reduced-rank regression."""

from __future__ import annotations

from .closed_forms import (
    clean_signal,
    excess_risk_curve,
    min_excess_risk,
    population_excess_risk,
    tail_energy,
    tail_energy_curve,
    whitened_operator,
)
from .reduced_rank import (
    empirical_risk,
    moment_init,
    normal_equations,
    rank_constrained_least_squares,
    reduced_rank_path,
    reduced_rank_regression,
)

__all__ = [
    "clean_signal",
    "excess_risk_curve",
    "min_excess_risk",
    "population_excess_risk",
    "tail_energy",
    "tail_energy_curve",
    "whitened_operator",
    "empirical_risk",
    "moment_init",
    "normal_equations",
    "rank_constrained_least_squares",
    "reduced_rank_path",
    "reduced_rank_regression",
]
