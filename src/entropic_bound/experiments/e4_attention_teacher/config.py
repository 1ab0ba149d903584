"""E4's typed config: the attention teachers, the logit-scale map of C6, the thresholds of C5 and C6, and the scale settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...config import param
from ...errors import ConfigError
from ...training.config import TrainConfig
from ...validation import check_ranks
from ..framework.draws import Drawn
from ..science.attention_task import AttentionTask


@dataclass(frozen=True)
class E4Verdict:
    """The thresholds of C5 and C6."""

    eps_floor: float = param(
        1e-2,
        gt=0.0,
        lt=1.0,
        doc="relative excess below which the floor is reached (C5's one boundary on both sides of r*)",
    )
    c5_margin: float = param(
        3.0, ge=1.0, doc="C5, reported only: the share of r < r* runs at >= c5_margin * eps_floor"
    )
    c5_rate: float = param(
        0.9, gt=0.0, le=1.0, doc="C5: the share of teacher draws on its side of eps_floor, each side of r*"
    )
    c6_normalisation: str = param(
        "k0",
        choices=("k0", "signal"),
        doc="C6: divide excess(r*-1) by the K = 0 excess (k0) or by the total signal",
    )
    c6_min_pairs: int = param(
        4, ge=1, doc="C6: (linear, softmax) pairs needed at a logit scale before it is decided there"
    )
    c6_boundary_share: float = param(
        0.5,
        gt=0.0,
        lt=1.0,
        doc="C6: the boundary sits at r* when more than this share of softmax teacher draws reach the floor "
        "at r* and stay above it at r*-1 (a transition is located where half its draws have crossed)",
    )
    c6_factor: float = param(
        0.8,
        gt=0.0,
        le=1.0,
        doc="C6: compressed if softmax/linear ratio of normalised excess(r*-1) <= c6_factor",
    )


@dataclass(frozen=True)
class E4Config(Drawn):
    task: AttentionTask = field(default_factory=AttentionTask)
    ranks: tuple[int, ...] = param((), ge=1, doc="student ranks; empty = 1..r*+2 and 2r*")
    v_settings: tuple[str, ...] = param(("known", "learned"), choices=("known", "learned"))
    seeds: int = param(1, ge=1, le=10_000)
    init_scale: float = param(1e-3, gt=0.0, doc="std of the W_Q, W_K entries at init")
    n_test: int = param(2048, ge=1, le=1_000_000, doc="held-out samples (dedicated seed)")
    c6_cs: tuple[float, ...] = param(
        (0.5, 1.0, 4.0), gt=0.0, doc="C6 map: further logit scales c, each run at r = r*-1 and r* only"
    )
    c6_v_settings: tuple[str, ...] = param(
        ("known",), choices=("known", "learned"), doc="C6 map: V settings of the further logit scales"
    )
    c6_r_stars: tuple[int, ...] = param(
        (4,), ge=1, doc="C6 map: r* of the further logit scales (empty: every r* of r_stars)"
    )
    c6_seeds: int = param(
        4,
        ge=1,
        le=10_000,
        doc="C6 map: seeds of the further logit scales (each a teacher pair per r* and spectrum)",
    )
    verdict: E4Verdict = field(default_factory=E4Verdict)
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(
            optimizer="adam", lr=3e-2, lr_final=1e-4, steps=300, n_samples=256, checkpoints=8, dtype="float32"
        )
    )

    def check(self) -> None:
        check_ranks("ranks", self.ranks, self.task.d, "task.d")
        if not self.v_settings:
            raise ConfigError("The 'v_settings' parameter must be non-empty. Got () instead.")
        if self.train.n_samples == 0:
            raise ConfigError(
                "The 'train.n_samples' parameter must be an int >= 1 for E4 (a fixed data set). Got 0 instead."
            )

    def student_ranks(self, r_star: int) -> list[int]:
        base = set(self.ranks) if self.ranks else set(range(1, r_star + 3)) | {2 * r_star}
        return sorted((base | {r_star - 1, r_star, r_star + 1}) & set(range(1, self.task.d + 1)))

    def c6_seed_count(self) -> int:
        """Seeds of the C6 map's further logit scales (``c6_seeds``: their own count, so that the seeds
        that size C5 at the default c do not multiply the map)."""
        return self.c6_seeds

    def c6_map(self, r_star: int) -> list[tuple[float, str, list[int]]]:
        """``(c, v, ranks)`` of the C6 map's further runs at ``r_star``: r*-1 and r* at each extra c."""
        if self.c6_r_stars and r_star not in self.c6_r_stars:
            return []
        ranks = [r for r in (r_star - 1, r_star) if r >= 1]
        extra = [x for x in self.c6_cs if x != self.task.c]
        return [(x, v, ranks) for x in extra for v in self.c6_v_settings if v in self.v_settings]


#: The fields that differ from the defaults at each scale (``Experiment.default_config``).
SCALE_SETTINGS = {
    # 18 seeds x 2 r* = 36 teacher draws per kind at c = 2: a share of 1 clears C5's 90 % bar by its
    # Wilson interval from 35 draws (stats.power.wilson_units on draws 0-2, every share 1). V known
    # only and ranks 1, r*-1, r*, r*+1: fewer conditions per teacher draw, not fewer draws.
    "quick": {
        "task": AttentionTask(spectra=("flat",)),
        "seeds": 18,
        "v_settings": ("known",),
        "ranks": (1,),
    },
    "paper": {
        "task": AttentionTask(r_stars=(1, 2, 4, 8)),
        "c6_r_stars": (),
        "c6_v_settings": ("known", "learned"),
        # 10 seeds: 80 teacher draws per kind for C5 (4 r* x 2 spectra) and 60 teacher pairs per c for C6
        # (r* >= 2); the paper draws' shares (0.976) need about 60 by their Wilson interval
        "seeds": 10,
        "c6_seeds": 10,
        "n_test": 4096,
        "train": TrainConfig(
            optimizer="adam",
            lr=3e-2,
            lr_final=1e-4,
            steps=500,
            n_samples=256,
            checkpoints=12,
            dtype="float32",
        ),
    },
}


#: A tiny grid for the tests that run every experiment (smoke, golden numbers): seconds, every
#: claim decided.
TINY_SETTINGS = {
    "seeds": 1,
    "ranks": (),
    "task.n": 6,
    "task.d": 8,
    "task.r_stars": (2,),
    "task.spectra": ("flat",),
    "v_settings": ("known",),
    "n_test": 64,
    "train.n_samples": 32,
    "train.steps": 20,
    "train.checkpoints": 3,
}
