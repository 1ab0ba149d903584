"""E5 — attention-native recovery: does GD from small init on ``r = d`` find a rank-``r*`` kernel? (C7, C8)

Over-parameterised students (B1 for the linear teacher, B2 for the softmax teacher, query–key
width ``r = d``) are trained by plain full-batch GD from several init scales (reference settings: ``N = 256``,
lr 10, init 1e-3, a few hundred steps). Every rank estimator (``spectra/estimators.py``) is applied to the learned
``K = W_Q W_Kᵀ`` (spectra from the factors, at log-spaced checkpoints and at the end), and to the
realised mixers ``M(X)`` on held-out inputs (per input then averaged, and on the mean mixer).
The teacher's own realised-mixer ranks are stored beside them for reference.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...models.base import MemberSpec
from ...results import RunResult, RunSpec
from ...spectra import estimate_all
from ...sweep.spec import grid_specs
from ...training.evaluation import held_out_excess, signal_power
from ..framework.base import Experiment
from ..framework.grid import member_result
from ..framework.parts import parts_of
from ..framework.spec_helpers import fixed_params
from ..framework.verdict import ClaimContext
from ..science.attention_teachers import (
    GroupSetup,
    attention_student,
    attention_task_params,
    kernel_matrices,
    mixer_estimates,
    saturation_stats,
    teacher_mixers,
)
from ..science.implicit_bias import groups_of_rows
from . import analysis, claims, config
from .recovery import min_norm_estimates


def _under_identified(group: list[RunSpec]) -> bool:
    """Whether a group's data set (its members share it) leaves K under-identified: ``N·n < d``."""
    p = group[0].params
    return p["train.n_samples"] * p["task.n"] < p["task.d"]


class E5AttentionRecovery(Experiment):
    config_class, scale_settings, declared_claims, analysis_function = parts_of(config, claims, analysis)
    run_cost, analysis_cost = 0.39, 3.1  # CPU s at quick scale (bench/profile_reproduce.py)
    title = "Attention-native recovery and rank estimators"
    member_params = ("init_scale",)
    student_of = attention_student

    def specs(self) -> list[RunSpec]:
        c = self.cfg
        fixed = fixed_params(c, attention_task_params(c.task), "n_test", "n_mixer")
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

    def prepare(self, table, ok, records, seeds):
        """The rows with ``min_norm_<key>`` on under-identified runs (``N·n < d``): every estimate of the
        minimum-norm kernel of each run's data set, regenerated from its seeds (of every draw the rows hold)."""
        if not len(ok):
            return ok, ClaimContext(records)
        by_run = {}
        for group in filter(_under_identified, groups_of_rows(self, ok, seeds)):
            setup = GroupSetup.of(self, group)  # the members share the teacher and the data set
            data = setup.data
            values = min_norm_estimates(
                data.X.double().numpy(), data.Y.double().numpy(), setup.teacher.V.double().numpy(), setup.kind
            )
            by_run.update({s.run_id: values for s in group})
        extra = pd.DataFrame([by_run.get(r, {}) for r in ok["run_id"]], index=ok.index)
        return ok.drop(columns=[c for c in extra if c in ok]).join(extra), ClaimContext(records)

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        setup = GroupSetup.of(self, group)
        p0, task, teacher, test = group[0].params, setup.task, setup.teacher, setup.test
        members = [
            MemberSpec(task.d, s.params["init_scale"], setup.seeds.seed("init", s.run_id)) for s in group
        ]
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
