"""E5 — attention-native recovery: does GD from small init on ``r = d`` find a rank-``r*`` kernel? (C7, C8)

Over-parameterised students (B1 for the linear teacher, B2 for the softmax teacher, query–key
width ``r = d``) are trained by plain full-batch GD from several init scales (SPEC §5b: ``N = 256``,
lr 10, init 1e-3, a few hundred steps). Every rank estimator of SPEC §4 is applied to the learned
``K = W_Q W_Kᵀ`` (spectra from the factors, at log-spaced checkpoints and at the end), and to the
realised mixers ``M(X)`` on held-out inputs (per input then averaged, and on the mean mixer).
The teacher's own realised-mixer ranks are stored beside them for reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..config import param
from ..errors import ConfigError
from ..models.base import MemberSpec
from ..registry import EXPERIMENTS
from ..results import RunResult, RunSpec
from ..spectra import ESTIMATOR_KEYS, estimate_all
from ..sweep.spec import grid_specs
from ..training import TrainConfig
from ..training.evaluation import held_out_excess, signal_power
from .base import Experiment, flat_params, member_result, moved_keys
from .e4_e5_common import (
    AttentionTask,
    GroupSetup,
    attention_task_params,
    kernel_matrices,
    mixer_estimates,
    saturation_stats,
    teacher_mixers,
)
from .e5_analysis import analyse_e5


@dataclass(frozen=True)
class E5Verdict:
    """The thresholds of C7 and C8."""

    small_init_max: float = param(1e-2, gt=0.0, doc="init scales up to this count as small")
    c7_contrast: float = param(0.5, gt=0.0, le=1.0, doc="C7: small minus large init low-rank rate, N·n < d")
    c7_fit: float = param(2.0, gt=0.0, doc="C7: learned when final train loss <= c7_fit·max(sigma², 1e-4)")
    c7_estimator: str = param(
        "energy_threshold_rank_99",
        choices=ESTIMATOR_KEYS,
        doc="estimator the C7 verdict uses (largest-gap and numerical rank read the fitted noise or the init "
        "residue of under-identified runs as rank)",
    )
    c7_tolerance: float = param(0.5, ge=0.0, doc="C7: |estimate - r*| <= tolerance counts as recovered")
    c7_rate: float = param(0.9, gt=0.0, le=1.0, doc="C7: required recovery rate of small init (identified N)")
    c8_margin: float = param(
        0.1, ge=0.0, doc="C8: allowed softmax - linear error (rank units), also vs numerical"
    )


@dataclass(frozen=True)
class E5Config:
    task: AttentionTask = field(default_factory=AttentionTask)
    v_settings: tuple[str, ...] = param(("known",), choices=("known", "learned"))
    init_scales: tuple[float, ...] = param((1e-3, 1e-2, 1e-1), gt=0.0)
    seeds: int = param(1, ge=1, le=10_000)
    n_test: int = param(1024, ge=1, le=1_000_000, doc="held-out samples for the excess risk")
    n_mixer: int = param(128, ge=1, le=100_000, doc="held-out inputs for the realised-mixer ranks")
    c7_sample_counts: tuple[int, ...] = param(
        (1,), ge=1, doc="C7 contrast: further data set sizes N; N·n < d leaves K under-identified"
    )
    c7_lr: float = param(1.0, gt=0.0, doc="C7 contrast runs: GD learning rate (lr 10 diverges at N = 1)")
    c7_steps: int = param(
        1000, ge=1, doc="C7 contrast runs: GD steps (they fit their data to the noise floor)"
    )
    verdict: E5Verdict = field(default_factory=E5Verdict)
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(
            optimizer="gd", lr=10.0, steps=300, n_samples=256, checkpoints=12, dtype="float32"
        )
    )

    def check(self) -> None:
        if not self.v_settings or not self.init_scales:
            raise ConfigError(
                "The 'v_settings' and 'init_scales' parameters must be non-empty. Got () instead."
            )
        if self.train.n_samples == 0:
            raise ConfigError(
                "The 'train.n_samples' parameter must be an int >= 1 for E5 (a fixed data set). Got 0 instead."
            )


@EXPERIMENTS.register(
    summary="attention-native recovery: GD from small init, estimators of K = W_Q W_K^T (C7, C8)"
)
class E5AttentionRecovery(Experiment):
    title = "Attention-native recovery and rank estimators"
    claims = ("C7", "C8")
    member_params = ("init_scale",)
    config_class = E5Config
    renamed_keys = {
        **moved_keys("task", "n d teachers r_stars spectra decay c sigma"),
        **moved_keys(
            "verdict", "small_init_max c7_contrast c7_fit c7_estimator c7_tolerance c7_rate c8_margin"
        ),
    }

    @classmethod
    def default_config(cls, scale: str) -> E5Config:
        if scale == "paper":
            return E5Config(
                task=AttentionTask(r_stars=(1, 2, 4, 8, 16)),
                seeds=3,
                init_scales=(1e-4, 1e-3, 1e-2, 1e-1),
                n_test=2048,
                n_mixer=256,
                train=TrainConfig(
                    optimizer="gd", lr=10.0, steps=300, n_samples=256, checkpoints=16, dtype="float32"
                ),
            )
        return E5Config()

    def specs(self) -> list[RunSpec]:
        c = self.cfg
        fixed = {**attention_task_params(c.task), "n_test": c.n_test, "n_mixer": c.n_mixer}
        fixed.update(flat_params(c.train, "train"))
        grid = {
            "teacher": c.task.teachers,
            "task.r_star": c.task.r_stars,
            "task.spectrum": c.task.spectra,
            "v": c.v_settings,
            "init_scale": c.init_scales,
        }
        out = grid_specs(self.name, grid, range(c.seeds), fixed)
        for N in c.c7_sample_counts:
            if N != c.train.n_samples:  # the under-identified contrast: plain GD at a stable step size
                under = {**fixed, "train.n_samples": N, "train.lr": c.c7_lr, "train.steps": c.c7_steps}
                out += grid_specs(self.name, grid, range(c.seeds), under)
        return out

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        setup = GroupSetup.of(self, group)
        p0, task, teacher, test = group[0].params, setup.task, setup.teacher, setup.test
        members = [MemberSpec(task.d, s.params["init_scale"], self.seed("init", s.run_id)) for s in group]
        model, outcome = setup.train_students(members, p0["v"] == "known")
        model = model.double()
        excess = held_out_excess(model, test.X, test.clean) / signal_power(test.clean)  # (M,) relative
        K, K_star = kernel_matrices(model).numpy(), teacher.truth["K"]  # (M, d, d), (d, d)
        k_error = np.linalg.norm(K - K_star, axis=(1, 2)) / np.linalg.norm(K_star)
        kernel = estimate_all(model.spectra()["K"].mean(1), shape=(task.d, task.d))  # key → (M,); h = 1
        X_mix = test.X[: p0["n_mixer"]]
        mixer = mixer_estimates(model.mixers(X_mix).mean(2))  # heads averaged: (M, B, n, n)
        ref = {
            f"teacher_{k}": float(v[0]) for k, v in mixer_estimates(teacher_mixers(teacher, X_mix)).items()
        }
        sat = saturation_stats(teacher, test.X)
        results = []
        for m, spec in enumerate(group):
            metrics = {
                "rel_excess": excess[m],
                "kernel_rel_error": k_error[m],
                "train_loss": outcome.final_loss[m],
                "steps_run": outcome.steps_run[m],
                **{f"K_{k}": v[m] for k, v in kernel.items()},
                **{k: v[m] for k, v in mixer.items()},
                **ref,
                **sat,
            }
            curves = {"teacher_singular_values": teacher.truth["singular_values"].tolist()}
            results.append(
                member_result(spec, m, outcome, metrics, keep=("steps_run", *ref, *sat), curves=curves)
            )
        return results

    def analyse_rows(self, table, records):
        return analyse_e5(self.cfg, table, records)
