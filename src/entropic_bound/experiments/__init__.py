"""Experiments E1…E7: each a config, a grid of runs, an ensemble executor and an analysis.

Importing this package registers every experiment in :data:`entropic_bound.registry.EXPERIMENTS`.
"""

from .base import SCALES, Analysis, Experiment, Verdict, derive_seed
from .e1_linear_surrogate import E1Config, E1LinearSurrogate
from .e2_recovery import E2Config, E2Recovery
from .e3_ladder import E3Config, E3Ladder
from .e4_attention_teacher import E4AttentionTeacher, E4Config
from .e5_attention_recovery import E5AttentionRecovery, E5Config
from .e6_predictability import E6Config, E6Predictability
from .e7_language import E7Config, E7Language

__all__ = [
    "Analysis",
    "E1Config",
    "E1LinearSurrogate",
    "E2Config",
    "E2Recovery",
    "E3Config",
    "E3Ladder",
    "E4AttentionTeacher",
    "E4Config",
    "E5AttentionRecovery",
    "E5Config",
    "E6Config",
    "E6Predictability",
    "E7Config",
    "E7Language",
    "Experiment",
    "SCALES",
    "Verdict",
    "derive_seed",
]
