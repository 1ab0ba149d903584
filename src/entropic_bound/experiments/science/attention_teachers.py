"""Shared pieces of E4 and E5: attention teachers and students, held-out excess risk, mixer ranks.

Teacher pairing: the linear and the softmax teacher of one ``(r*, spectrum, seed)`` are drawn from
the *same* generator (the seed leaves the teacher kind out), so they share ``K*`` and ``V*`` and
their training and held-out inputs ``X`` — the two teachers differ only in the softmax, which is
what C6 compares.

Excess risk is measured on a fixed held-out set drawn from a dedicated seed, against the
*clean* target: ``ΔR_m = mean_{b,i,k} (f_m(X)_bik − f*(X)_bik)²``, accumulated in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ...models.base import MemberSpec
from ...registry import STUDENTS, TASKS
from ...results import RunSpec
from ...spectra import estimate_all, singular_values
from ...tasks import ATTENTION_TEACHERS, Batch
from ...training import FixedData, TrainConfig, TrainOutcome
from ...training.evaluation import signal_power
from ...training.trainer import DTYPES
from ..framework.device import train_on
from ..framework.draws import Seeds
from ..framework.params import from_params
from .attention_task import TEACHER_KINDS, AttentionTask, attention_task_params  # noqa: F401  (read from here too)

STUDENT_RUNG = {"linear": "B1", "softmax": "B2"}  # names in STUDENTS


def attention_student(experiment, spec: RunSpec) -> str:
    """E4/E5's ``Experiment.student_of``: B1 learns the linear teacher, B2 the softmax one."""
    return STUDENT_RUNG[spec.params["teacher"]]


def draw_teacher(seeds: Seeds, kind: str, task_params: dict, seed: int):
    """``(task, teacher)`` for ``kind``; ``K*``, ``V*`` depend on ``task_params``, ``seed`` and the draw only."""
    task = TASKS.build(ATTENTION_TEACHERS[kind], **task_params)
    g = torch.Generator().manual_seed(seeds.seed("teacher", sorted(task_params.items()), seed))
    return task, task.teacher(g)


def draw_data(
    seeds: Seeds,
    purpose: str,
    teacher,
    task_params: dict,
    n_samples: int,
    seed: int,
    dtype: torch.dtype,
) -> Batch:
    """``n_samples`` samples from a generator seeded by ``(experiment, purpose, task_params, N, seed)``
    and the draw.

    ``purpose`` is ``"train"`` or ``"test"``; the held-out set has its own dedicated seed.
    """
    key = seeds.seed(purpose, sorted(task_params.items()), n_samples, seed)
    return teacher.sample(n_samples, torch.Generator().manual_seed(key), dtype=dtype)


def build_student(kind: str, members: list[MemberSpec], teacher, v_known: bool, dtype: torch.dtype):
    """B1 for the linear teacher, B2 (temperature √d, the teacher's) for the softmax teacher."""
    V = teacher.V.to(dtype) if v_known else None
    return STUDENTS.build(
        STUDENT_RUNG[kind], members, n=teacher.n, d=teacher.d, d_v=teacher.d_v, V_known=V, dtype=dtype
    )


@dataclass
class GroupSetup:
    """What every run of one E4/E5 group shares: the teacher, its training and held-out data."""

    seeds: Seeds  # the experiment and the draw the group's runs belong to
    kind: str
    task_params: dict
    task: object
    teacher: object
    train: TrainConfig
    dtype: torch.dtype
    data: Batch
    test: Batch
    seed: int
    device: str = "cpu"  # where the ensemble trains (the experiment's ``device``)

    @classmethod
    def of(cls, experiment, group: list[RunSpec]) -> GroupSetup:
        """``experiment``: the :class:`~.base.Experiment` whose name the group's seeds derive from, with
        the draw its runs carry."""
        p0, seed = group[0].params, group[0].seed
        kind, task_params = p0["teacher"], from_params(group[0], "task")
        seeds = Seeds(experiment.name, group[0].draw)
        task, teacher = draw_teacher(seeds, kind, task_params, seed)
        train = experiment.train_config(group[0])
        dtype = DTYPES[train.dtype]
        data = draw_data(seeds, "train", teacher, task_params, train.n_samples, seed, dtype)
        test = draw_data(seeds, "test", teacher, task_params, p0["n_test"], seed, torch.float64)
        return cls(
            seeds,
            kind,
            task_params,
            task,
            teacher,
            train,
            dtype,
            data,
            test,
            seed,
            experiment.device,
        )

    def train_students(self, members: list[MemberSpec], v_known: bool) -> tuple[object, TrainOutcome]:
        """Build the group's ensemble and train it on the shared data (minibatch order seeded per group)."""
        model = build_student(self.kind, members, self.teacher, v_known, self.dtype)
        gen = torch.Generator().manual_seed(self.seeds.seed("batches", self.task_params, self.seed))
        data = FixedData(self.data.X, self.data.Y, self.train.batch_size, gen)
        return model, train_on(self.device, model, data, self.train)


def uniform_attention_excess(batch: Batch, V: torch.Tensor | None, kind: str) -> float:
    """Excess risk of the best ``K = 0`` model of the student class on ``batch``.

    Linear QK with ``K = 0`` outputs 0, so its excess is the signal. Softmax with ``K = 0`` mixes
    uniformly: ``f(X) = 1 x̄ᵀ V`` with ``x̄ = mean_j x_j``; with ``V`` known it is evaluated as is,
    with ``V`` learned the best ``V`` is the least-squares fit of the clean target on ``x̄``
    (fitted and evaluated on the same large held-out set: the population optimum up to O(d/N)).
    """
    if kind == "linear":
        return signal_power(batch.clean)
    X, clean = batch.X.double(), batch.clean.double()  # (N, n, d), (N, n, d_v)
    xbar = X.mean(1)  # (N, d)
    if V is None:
        target = clean.mean(1)  # (N, d_v): the best V fits the token-averaged target
        V = torch.linalg.lstsq(xbar, target).solution  # (d, d_v)
    pred = (xbar @ V.double()).unsqueeze(1)  # (N, 1, d_v), the same row for every token
    return float((pred - clean).pow(2).mean())


def kernel_matrices(model) -> torch.Tensor:
    """Head-averaged kernels ``K = mean_h W_Q^h W_K^hᵀ``, ``(M, d, d)`` float64."""
    return model.kernel().detach().double().mean(1)


def mixer_estimates(mixers: torch.Tensor) -> dict[str, np.ndarray]:
    """Realised-mixer rank estimates from mixers ``(M, B, n, n)``.

    ``mixer_<key>``: the estimator on each input's mixer, averaged over inputs, ``(M,)``;
    ``meanmixer_<key>``: the estimator on the mean mixer ``mean_b M(X_b)``, ``(M,)``.
    """
    n = mixers.shape[-1]
    per_input = estimate_all(singular_values(mixers), shape=(n, n))  # key → (M, B)
    mean = estimate_all(singular_values(mixers.mean(1)), shape=(n, n))  # key → (M,)
    out = {f"mixer_{k}": v.mean(-1) for k, v in per_input.items()}
    out.update({f"meanmixer_{k}": v for k, v in mean.items()})
    return out


def teacher_mixers(teacher, X: torch.Tensor) -> torch.Tensor:
    """The teacher's realised mixers on ``X (B, n, d)`` as ``(1, B, n, n)`` float64."""
    return teacher.mixer(X.double()).unsqueeze(0)


def saturation_stats(teacher, X: torch.Tensor) -> dict[str, float]:
    """Row entropy / log n and mean max attention of the softmax teacher (NaN for the linear one)."""
    if hasattr(teacher, "saturation"):
        return teacher.saturation(X)
    return {"row_entropy_ratio": math.nan, "mean_max_attention": math.nan}
