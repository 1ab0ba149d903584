"""Experiments E1…E7, one folder each with the same files: ``config.py`` (the typed config and its
scale settings), ``experiment.py`` (the grid and ``execute``), ``analysis.py`` (tables, figures, notes),
``plots.py`` and ``claims.py`` (each claim's criterion, report sentence and robustness grid).

Each is declared (lazily, by ``module:object``) in :data:`entropic_bound.registry.EXPERIMENTS`.
"""

from ..defaults import SCALES
from ..registry import EXPERIMENTS
from .base import Experiment
from .e1_linear_surrogate.config import E1Config
from .e1_linear_surrogate.experiment import E1LinearSurrogate
from .e2_recovery.config import E2Config
from .e2_recovery.experiment import E2Recovery
from .e3_ladder.config import E3Config
from .e3_ladder.experiment import E3Ladder
from .e4_attention_teacher.config import E4Config
from .e4_attention_teacher.experiment import E4AttentionTeacher
from .e5_attention_recovery.config import E5Config
from .e5_attention_recovery.experiment import E5AttentionRecovery
from .e6_predictability.config import E6Config
from .e6_predictability.experiment import E6Predictability
from .e7_language.config import E7Config
from .e7_language.experiment import E7Language
from .grid import derive_seed
from .verdict import Analysis, Verdict


def declared_claims() -> list:
    """Every claim the experiments declare (:class:`~entropic_bound.experiments.claim.Claim`), E1's first."""
    return [claim for name in EXPERIMENTS for claim in EXPERIMENTS.get(name).declared_claims]


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
    "declared_claims",
    "derive_seed",
]
