"""Experiment-independent statistics behind the verdicts: the convergence rule,
Spearman tests that hold at few points, model-clustered shares, the pre-stated choice of one rank
estimator, and the classification of rank-over-training curves. Pure functions of arrays and tables.
"""

from __future__ import annotations

from .cluster import cluster_share, model_shares, wilson
from .convergence import classify_runs, convergence
from .estimator_choice import RULE, TIE_ORDER, choose_estimator, ground_truth_cases
from .rank_tests import (
    corpus_bootstrap,
    fisher_interval,
    partial_spearman,
    points_needed,
    spearman,
    spearman_test,
)
from .transients import classify_rank_curve

__all__ = [
    "RULE",
    "TIE_ORDER",
    "choose_estimator",
    "classify_rank_curve",
    "classify_runs",
    "cluster_share",
    "convergence",
    "corpus_bootstrap",
    "fisher_interval",
    "ground_truth_cases",
    "model_shares",
    "partial_spearman",
    "points_needed",
    "spearman",
    "spearman_test",
    "wilson",
]
