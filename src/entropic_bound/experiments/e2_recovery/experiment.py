"""E2 — recovery: does GD from small init on an over-parameterised ``A = P Qᵀ`` find rank r*? (C3)

Students ``B0`` of full rank ``r = n`` are trained from several init scales by plain GD (and by
Adam as a contrast) on fixed data sets that identify the operator (``N·d_v ≥ n``) and that do not.
Every rank estimator of the learned ``A`` is recorded over training and at the end.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import torch

from ...models import MemberSpec
from ...registry import STUDENTS
from ...results import RunResult, RunSpec
from ...spectra import estimate_all
from ...sweep.spec import grid_specs
from ...tasks import FixedOperatorTask
from ...theory import clean_signal, population_excess_risk
from ...training import MomentData, TrainConfig
from ...training.trainer import DTYPES
from ..framework.base import Experiment
from ..framework.device import train_on
from ..framework.grid import member_result
from ..framework.params import from_params, to_params
from ..framework.parts import parts_of
from ..framework.verdict import ClaimContext
from ..science.implicit_bias import groups_of_rows
from . import analysis, claims, config
from .recovery import min_norm_estimates


class E2Recovery(Experiment):
    config_class, scale_settings, declared_claims, analysis_function = parts_of(config, claims, analysis)
    run_cost, analysis_cost = 0.35, 1.5  # CPU s at quick scale (bench/profile_reproduce.py)
    title = "Linear surrogate: recovery by gradient descent from small init"
    member_params = ("init_scale",)
    full_batch_moments = True

    def specs(self) -> list[RunSpec]:
        c = self.cfg
        task = to_params(c.task, "task", ("n", "d", "decay", "sigma"))
        grid = {"task.r_star": c.task.r_stars, "task.spectrum": c.task.spectra, "init_scale": c.init_scales}
        out = []
        for n_samples in c.sample_counts:
            for opt in c.optimizers:
                train = to_params(self._train(opt, n_samples), "train")
                out += grid_specs(self.name, grid, range(c.seeds), {**task, **train})
        return out

    def _train(self, optimizer: str, n_samples: int) -> TrainConfig:
        """The training of one cell of the grid: GD at ``train.lr`` or Adam at ``adam_lr``, on ``n_samples``."""
        lr = self.cfg.train.lr if optimizer == "gd" else self.cfg.adam_lr
        return replace(self.cfg.train, optimizer=optimizer, lr=lr, n_samples=n_samples)

    def train_config(self, spec: RunSpec) -> TrainConfig:
        return self._train(spec.params["train.optimizer"], spec.params["train.n_samples"])

    def student_of(self, spec: RunSpec) -> str:
        return "B0"

    def data_set(self, spec: RunSpec):
        """``(task, teacher, batch)`` of one run: the teacher and the fixed data set it trains on."""
        seed, seeds = spec.seed, self.seeds_of([spec])
        task = FixedOperatorTask(**from_params(spec, "task"))
        teacher = task.teacher(torch.Generator().manual_seed(seeds.seed("teacher", task, seed)))
        train = self.train_config(spec)
        data_gen = torch.Generator().manual_seed(seeds.seed("data", task, train.n_samples, seed))
        return task, teacher, teacher.sample(train.n_samples, data_gen, dtype=DTYPES[train.dtype])

    def prepare(self, table, ok, records, seeds):
        """The rows with ``min_norm_<key>``: every estimate of the minimum-norm interpolant of each run's
        data set, regenerated from its seeds (of every draw the rows hold)."""
        if not len(ok):
            return ok, ClaimContext(records)
        by_run = {}
        for group in groups_of_rows(self, ok, seeds):
            _, teacher, batch = self.data_set(group[0])  # the members share the data set
            values = min_norm_estimates(batch.X.double().numpy(), batch.Y.double().numpy(), teacher.V.numpy())
            by_run.update({s.run_id: values for s in group})
        extra = pd.DataFrame([by_run.get(r, {}) for r in ok["run_id"]], index=ok.index)
        return ok.drop(columns=[c for c in extra if c in ok]).join(extra), ClaimContext(records)

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        task, teacher, batch = self.data_set(group[0])
        truth = teacher.truth
        train = self.train_config(group[0])
        dtype = DTYPES[train.dtype]
        members = [
            MemberSpec(task.n, s.params["init_scale"], self.seeds_of(group).seed("init", s.run_id))
            for s in group
        ]
        model = STUDENTS.build(
            "B0", members, n=task.n, d=task.d, d_v=task.d_out, V_known=teacher.V, dtype=dtype
        )
        outcome = train_on(
            self.device, model, MomentData.from_data(batch.X, batch.Y), train
        )  # full batch via moments
        A = model.operators()["A"].numpy()  # (M, n, n)
        excess = population_excess_risk(
            A, np.broadcast_to(truth["V"], (len(group), *truth["V"].shape)), truth["A"], truth["V"]
        )
        rel_error = np.linalg.norm(A - truth["A"], axis=(1, 2)) / np.linalg.norm(truth["A"])
        estimates = estimate_all(model.spectra()["A"], shape=(task.n, task.n))
        signal = clean_signal(truth["A"], truth["V"])
        identified = float(self.cfg.identified(train.n_samples))
        teacher_curves = {"teacher_singular_values": truth["singular_values"].tolist()}
        return [
            member_result(
                spec,
                m,
                outcome,
                {
                    "rel_excess": excess[m] / signal,
                    "rel_error": rel_error[m],
                    "train_loss": outcome.final_loss[m],
                    "identified": identified,
                    "steps_run": outcome.steps_run[m],
                    **{f"A_{k}": v[m] for k, v in estimates.items()},
                },
                keep=("identified", "steps_run"),
                curves=teacher_curves,
            )
            for m, spec in enumerate(group)
        ]
