"""E1's typed config: the teachers, the student grid, the thresholds of C1 and C2, and the scale settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...config import param
from ...errors import ConfigError
from ...tasks.names import SPECTRA
from ...training.config import TrainConfig
from ...validation import check_ranks
from ..framework.draws import Drawn


@dataclass(frozen=True)
class E1Task:
    """The ``fixed_operator`` teachers: one per (r*, spectrum)."""

    n: int = param(16, ge=2, le=512, doc="tokens per sequence (A* is n×n)")
    d: int = param(8, ge=1, le=512, doc="input features")
    r_stars: tuple[int, ...] = param((2, 4), ge=1, doc="intrinsic ranks of the teachers")
    spectra: tuple[str, ...] = param(("flat", "geometric"), choices=SPECTRA)
    decay: float = param(0.25, gt=0.0, le=1.0, doc="geometric spectra: s_r*/s_1")
    sigma: float = param(0.1, ge=0.0, doc="noise standard deviation (the noise floor is sigma^2)")

    def check(self) -> None:
        check_ranks("task.r_stars", self.r_stars, self.n, "task.n", nonempty=True)


@dataclass(frozen=True)
class E1Verdict:
    """The thresholds of C1 and C2."""

    eps_floor: float = param(
        1e-2, gt=0.0, lt=1.0, doc="relative excess below which a model reaches the floor"
    )
    c1_low: float = param(0.9, gt=0.0, doc="C1: lower end of the band for median measured/closed-form")
    c1_high: float = param(1.1, gt=0.0, doc="C1: upper end of the band")
    sharpness: float = param(100.0, gt=1.0, doc="C2: minimum excess(r*-1)/excess(r*) for a sharp transition")

    def check(self) -> None:
        if self.c1_low >= self.c1_high:
            raise ConfigError(
                f"The 'verdict.c1_low' parameter must be below verdict.c1_high={self.c1_high}. "
                f"Got {self.c1_low} instead."
            )


@dataclass(frozen=True)
class E1Config(Drawn):
    task: E1Task = field(default_factory=E1Task)
    ranks: tuple[int, ...] = param((), ge=1, doc="student ranks; empty = 1..n; r*-1, r*, r*+1 always added")
    v_settings: tuple[str, ...] = param(("known", "learned"), choices=("known", "learned"))
    seeds: int = param(1, ge=1, le=10_000, doc="replicates (teacher, data and init seeds)")
    init_scale: float = param(0.1, gt=0.0, doc="std of the factor entries at init")
    verdict: E1Verdict = field(default_factory=E1Verdict)
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(optimizer="adam", lr=1e-2, lr_final=1e-4, steps=500, n_samples=32)
    )

    def check(self) -> None:
        check_ranks("ranks", self.ranks, self.task.n, "task.n")

    def student_ranks(self, r_star: int) -> list[int]:
        n = self.task.n
        base = set(self.ranks) if self.ranks else set(range(1, n + 1))
        return sorted((base | {r_star - 1, r_star, r_star + 1}) & set(range(1, n + 1)))


#: The fields that differ from the defaults at each scale (``Experiment.default_config``).
SCALE_SETTINGS = {
    "quick": {"ranks": (1, 2, 3, 4, 5, 6, 8, 12, 16)},
    "paper": {
        "task": E1Task(r_stars=(2, 4, 8), spectra=("flat", "geometric", "power")),
        "seeds": 3,
        "train": TrainConfig(optimizer="adam", lr=1e-2, lr_final=1e-4, steps=2000, n_samples=128),
    },
}


#: A tiny grid for the tests that run every experiment (smoke, golden numbers): seconds, every
#: claim decided.
TINY_SETTINGS = {
    "task.r_stars": (2,),
    "task.spectra": ("flat", "geometric"),
    "ranks": (1, 2, 3),
    "task.n": 8,
    "task.d": 4,
    "train.steps": 60,
    "train.n_samples": 24,
}
