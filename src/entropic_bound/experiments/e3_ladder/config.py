"""E3's typed config: the task, the ladder of students, the X2 probe, the thresholds of C4 and X2, and the scale settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...config import param
from ...errors import ConfigError
from ...models.names import TEMPERATURES
from ...registry import STUDENTS
from ...tasks.names import SPECTRA
from ...training.config import TrainConfig
from ...validation import check_rank, check_ranks
from ..framework.draws import Drawn


def ladder() -> tuple[str, ...]:
    """The ladder: the registered students with a place on it (``ladder_step >= 0``), in their order."""
    on_ladder = [s for s in STUDENTS if STUDENTS.get(s).ladder_step >= 0]
    return tuple(sorted(on_ladder, key=lambda s: STUDENTS.get(s).ladder_step))


def positional_rungs() -> tuple[str, ...]:
    """The rungs that take learned positions (``supports_positional``), in ladder order (X2's)."""
    return tuple(s for s in ladder() if STUDENTS.get(s).supports_positional)


def __getattr__(name: str):
    # The ladder is read from the student classes (which import torch) when it is asked for, not
    # when this module is imported: the command line checks a ``--set`` against it without torch.
    if name == "RUNGS":
        return ladder()
    if name == "POSITIONAL_RUNGS":
        return positional_rungs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def ladder_parts() -> tuple[str, tuple[str, ...]]:
    """The ladder as the registry declares it: the fixed-mixer rung it starts from (B0) and the
    input-conditioned rungs above it in ladder order (B1, B2, B3, and any rung registered later)."""
    rungs = ladder()
    fixed = [r for r in rungs if STUDENTS.get(r).fixed_mixer]
    return fixed[0], tuple(r for r in rungs if not STUDENTS.get(r).fixed_mixer)


OPERATORS = ("low_rank", "row_stochastic")


ROLES = ("ladder", "control_b", "x2")


def _train(steps: int, lr: float) -> TrainConfig:
    return TrainConfig(
        optimizer="adam",
        lr=lr,
        lr_final=1e-4,
        steps=steps,
        n_samples=0,
        batch_size=32,
        checkpoints=8,
        dtype="float32",
    )


@dataclass(frozen=True)
class E3Task:
    """The one task every rung trains on (``fixed_operator``), and the control and X2 teachers' extras."""

    n: int = param(16, ge=2, le=256, doc="tokens per sequence (A* is n×n; B0's full rank)")
    d: int = param(16, ge=1, le=256, doc="input features (= d_v; the full query–key rank of B1–B3)")
    r_star: int = param(4, ge=1, doc="rank of A* (and of the control teacher's K*)")
    spectrum: str = param("flat", choices=SPECTRA)
    sigma: float = param(0.1, ge=0.0, doc="noise standard deviation")
    seed: int = param(0, ge=0, doc="draws the tasks; every rung sees the same task and data stream")
    c: float = param(2.0, gt=0.0, doc="control (b): logit scale c of the B1 teacher (||K*||_F = c sqrt(d))")
    logit_scale: float = param(2.0, gt=0.0, doc="X2's row-stochastic A*: rms of its rank-r* logits")

    def check(self) -> None:
        check_rank("task.r_star", self.r_star, self.n, what="task.n")


@dataclass(frozen=True)
class E3Verdict:
    """The thresholds of C4 and X2."""

    eps_floor: float = param(
        1e-2, gt=0.0, lt=1.0, doc="relative excess below which a model reaches the floor"
    )
    c4_fail: float = param(
        0.5, gt=0.0, doc="C4: B1–B3 at full rank fail when their relative excess is >= this"
    )
    c4_ratio: float = param(0.1, gt=0.0, doc="C4 (c): max(|B2−B1|, |B3−B2|) / (B1 − B0) must be <= this")
    convergence_tol: float = param(
        0.10,
        gt=0.0,
        lt=1.0,
        doc="a run above the floor converged when its held-out excess fell by < this over the last quarter "
        "of training time (summed learning rate); stats.convergence",
    )
    x2_seed_share: float = param(
        0.5,
        gt=0.0,
        lt=1.0,
        doc="X2: a setting makes A* learnable when more than this share of student seeds reach the floor "
        "(its median is below eps_floor exactly when the share is above 1/2)",
    )
    x2_min_steps: int = param(
        6000,
        ge=1,
        doc="X2: runs shorter than this cannot refute (the reference study needed >= 6000 steps: docs/claims.md § X2)",
    )


@dataclass(frozen=True)
class E3Config(Drawn):
    task: E3Task = field(default_factory=E3Task)
    rungs: tuple[str, ...] = param(default_factory=ladder, choices=ladder, doc="ladder rungs")
    ranks: tuple[int, ...] = param(
        (1, 2, 4, 8), ge=1, doc="swept ranks (<= d); the full rank is always added"
    )
    v_settings: tuple[str, ...] = param(("known", "learned"), choices=("known", "learned"))
    seeds: int = param(2, ge=1, le=1000, doc="student initialisations per setting (the task is fixed)")
    n_heads: int = param(1, ge=1, le=64, doc="heads of B1–B3 (each of rank r, outputs averaged)")
    temperature: str = param("sqrt_d", choices=TEMPERATURES, doc="softmax temperature of B2/B3")
    init_scale: float = param(0.25, gt=0.0, doc="std of the query–key factor entries at init (B1–B3)")
    b0_init_scale: float = param(0.1, gt=0.0, doc="std of B0's factor entries at init")
    n_test: int = param(1024, ge=16, le=10_000_000, doc="fresh held-out samples for the excess risk")
    n_mixer: int = param(64, ge=1, le=100_000, doc="held-out inputs the stored mean mixer averages over")
    control_b: bool = param(True, doc="control (b): B1 on a linear_qk_teacher task")
    positional_rungs: tuple[str, ...] = param(
        default_factory=positional_rungs,
        choices=ladder,
        doc="X2: rungs run with learned_absolute positions (empty: no X2)",
    )
    x2_operators: tuple[str, ...] = param(
        OPERATORS, choices=OPERATORS, doc="X2: A* signed low-rank / row-stochastic"
    )
    x2_ranks: tuple[int, ...] = param((), ge=1, doc="X2 ranks (<= d); empty = r* and d")
    x2_heads: tuple[int, ...] = param((1,), ge=1, le=64, doc="X2 head counts")
    x2_v_settings: tuple[str, ...] = param(("known",), choices=("known", "learned"))
    x2_seeds: int = param(
        0, ge=0, le=1000, doc="X2: student initialisations per X2 setting (0: the same as 'seeds')"
    )
    verdict: E3Verdict = field(default_factory=E3Verdict)
    train: TrainConfig = field(default_factory=lambda: _train(500, 1e-2))
    x2_train: TrainConfig = field(default_factory=lambda: _train(1500, 3e-2))

    def check(self) -> None:
        if not self.rungs:
            raise ConfigError(
                f"The 'rungs' parameter must hold at least one of {', '.join(ladder())}. Got () instead."
            )
        positional = positional_rungs()
        bad_pos = [r for r in self.positional_rungs if r not in positional]
        if bad_pos:
            raise ConfigError(
                f"positional information is for {' and '.join(positional)} only. "
                f"Got {bad_pos[0]!r} in 'positional_rungs'."
            )
        attention = (
            any(not STUDENTS.get(s).fixed_mixer for s in self.rungs)
            or self.control_b
            or self.positional_rungs
        )
        n, d = self.task.n, self.task.d
        upper, what = (d, "task.d, the query–key width of B1–B3") if attention else (n, "task.n")
        check_ranks("ranks", self.ranks, upper, what)
        check_ranks("x2_ranks", self.x2_ranks, upper, what)
        if self.control_b:
            check_rank("task.r_star", self.task.r_star, d, what="task.d, the B1 teacher's kernel is d×d")

    def x2_seed_count(self) -> int:
        """Student seeds of every X2 setting: ``x2_seeds``, or ``seeds`` where it is 0."""
        return self.x2_seeds or self.seeds

    def full_rank(self, student: str) -> int:
        """``student``'s full rank on this task (``n`` for B0's n×n operator, ``d`` for the kernels)."""
        return STUDENTS.get(student).full_rank(self.task.n, self.task.d)

    def ladder_ranks(self, student: str) -> list[int]:
        full = self.full_rank(student)
        return sorted({r for r in self.ranks if r <= full} | {full})


#: The fields that differ from the defaults at each scale (``Experiment.default_config``).
SCALE_SETTINGS = {
    "paper": {
        "seeds": 3,
        "ranks": (1, 2, 4, 8, 12),
        "x2_ranks": (2, 4, 8, 16),
        "x2_heads": (1, 2),
        "x2_v_settings": ("known", "learned"),
        # 8 seeds per X2 setting: a share of seeds reaching the floor decides against 1/2 by its Wilson
        # interval with one seed stuck (7 of 8: 0.53-0.98); the ladder keeps its 3 (C4 decided)
        "x2_seeds": 8,
        "n_test": 4096,
        "train": _train(2000, 1e-2),
        "x2_train": _train(12000, 3e-2),  # B1 signed: 0.0126 at 6000 steps, 0.0046 at 18000
    },
}


#: A tiny grid for the tests that run every experiment (smoke, golden numbers): seconds, every
#: claim decided.
TINY_SETTINGS = {
    "task.n": 8,
    "task.d": 8,
    "task.r_star": 2,
    "ranks": (2,),
    "seeds": 1,
    "v_settings": ("known",),
    "train.steps": 30,
    "x2_train.steps": 20,
    "x2_ranks": (8,),
    "n_test": 64,
    "n_mixer": 8,
}
