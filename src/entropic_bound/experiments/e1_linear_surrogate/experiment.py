"""E1 — the linear surrogate's deficiency and achievability (claims C1, C2).

Students ``B0`` of every rank ``r`` are trained on ``fixed_operator`` tasks of several ``r*`` and
spectra, with ``V`` known and learned. Each trained student's excess risk is computed *exactly*
(population formula) and set beside the closed-form minimum ``ΔR_min(r)`` (tail energy)
and the finite-sample optimum on the same data (reduced-rank regression for V known, alternating
least squares for V learned).
"""

from __future__ import annotations

import numpy as np
import torch

from ...models import MemberSpec
from ...registry import STUDENTS
from ...results import RunResult, RunSpec
from ...spectra import estimate_all
from ...tasks import FixedOperatorTask
from ...theory import (
    clean_signal,
    excess_risk_curve,
    population_excess_risk,
    rank_constrained_least_squares,
    reduced_rank_path,
)
from ...training import FixedData, FreshData, MomentData
from ...training.trainer import DTYPES
from ..framework.base import Experiment
from ..framework.device import train_on
from ..framework.grid import member_result
from ..framework.params import from_params, to_params
from ..framework.parts import parts_of
from ..framework.spec_helpers import fixed_params, rank_sweep
from . import analysis, claims, config


class E1LinearSurrogate(Experiment):
    config_class, scale_settings, declared_claims, analysis_function = parts_of(config, claims, analysis)
    run_cost, analysis_cost = 0.08, 1.3  # CPU s at quick scale (bench/profile_reproduce.py)
    title = "Linear surrogate: deficiency and achievability"
    member_params = ("rank",)
    full_batch_moments = True

    def specs(self) -> list[RunSpec]:
        c = self.cfg
        fixed = fixed_params(c, to_params(c.task, "task", ("n", "d", "decay", "sigma")), "init_scale")
        return [spec for r_star in c.task.r_stars for spec in rank_sweep(self.name, c, fixed, r_star)]

    def student_of(self, spec: RunSpec) -> str:
        return "B0"

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        p0, seed, seeds = group[0].params, group[0].seed, self.seeds_of(group)
        task = FixedOperatorTask(**from_params(group[0], "task"))
        teacher = task.teacher(torch.Generator().manual_seed(seeds.seed("teacher", task, seed)))
        truth = teacher.truth
        train = self.train_config(group[0])
        dtype = DTYPES[train.dtype]
        data_gen = torch.Generator().manual_seed(seeds.seed("data", task, seed))
        V_known = teacher.V if p0["v"] == "known" else None
        members = [
            MemberSpec(s.params["rank"], s.params["init_scale"], seeds.seed("init", s.run_id)) for s in group
        ]
        model = STUDENTS.build(
            "B0", members, n=task.n, d=task.d, d_v=task.d_out, V_known=V_known, dtype=dtype
        )
        if train.n_samples:
            batch = teacher.sample(train.n_samples, data_gen, dtype=dtype)
            # full batch: train from the data's moments (same objective, cost independent of N)
            data = (
                FixedData(batch.X, batch.Y, train.batch_size, data_gen)
                if train.batch_size
                else MomentData.from_data(batch.X, batch.Y)
            )
        else:
            batch, data = None, FreshData(teacher, train.batch_size, data_gen, dtype)
        outcome = train_on(self.device, model, data, train)
        ops = model.operators()
        excess = population_excess_risk(ops["A"], ops["V"], truth["A"], truth["V"])  # (M,)
        ranks = [s.params["rank"] for s in group]
        signal = clean_signal(truth["A"], truth["V"])
        closed = excess_risk_curve(truth["A"], truth["V"], ranks)
        closed[closed < 1e-12 * signal] = 0.0  # A*'s trailing singular values are round-off (~1e-16)
        optimum = (
            _finite_sample_optimum(batch, teacher, ranks, p0["v"])
            if batch is not None
            else [np.nan] * len(ranks)
        )
        estimates = estimate_all(model.spectra()["A"], shape=(task.n, task.n))
        teacher_curves = {"teacher_singular_values": truth["singular_values"].tolist()}
        return [
            member_result(
                spec,
                m,
                outcome,
                {
                    "excess": excess[m],
                    "rel_excess": excess[m] / signal,
                    "closed_form": closed[m],
                    "closed_form_rel": closed[m] / signal,
                    "finite_sample_optimum": optimum[m],
                    "ratio_to_closed_form": excess[m] / closed[m] if closed[m] > 0 else np.nan,
                    "train_loss": outcome.final_loss[m],
                    "noise_floor": task.sigma**2,
                    "signal": signal,
                    "steps_run": outcome.steps_run[m],
                    **{f"A_{k}": v[m] for k, v in estimates.items()},
                },
                keep=("steps_run", "noise_floor", "signal"),
                curves=teacher_curves,
            )
            for m, spec in enumerate(group)
        ]


def _finite_sample_optimum(batch, teacher, ranks: list[int], v: str) -> list[float]:
    """Population excess of the rank-r least-squares fit on the training data, per rank."""
    truth = teacher.truth
    X, Y = batch.X.double(), batch.Y.double()
    if v == "known":
        A = reduced_rank_path(X, Y, teacher.V, ranks)  # (R, n, n)
        V = np.broadcast_to(truth["V"], (len(ranks), *truth["V"].shape))
        return list(population_excess_risk(A, V, truth["A"], truth["V"]))
    out = []
    for r in ranks:
        A, V = rank_constrained_least_squares(X, Y, r)
        out.append(float(population_excess_risk(A, V, truth["A"], truth["V"])))
    return out
