"""E3 — the interpolation ladder B0 → B1 → B2 → B3 on one ``fixed_operator`` task (claim C4, extension X2).

Every rung is trained on the *same* task (``A*``, ``V*`` drawn once from ``task_seed``) and the same
data stream (one data generator per task, so every ensemble sees identical batches), at full rank
(``r = n`` for B0, ``r = d`` for B1–B3) and at swept ranks, V known and V learned, several student
initialisations (``seeds``). Three roles of runs:

- ``ladder``: B0…B3 on ``fixed_operator`` (C4's jump: B0 reaches the floor, B1–B3 do not);
- ``control_b``: B1 on a ``linear_qk_teacher`` task — the architecture trains fine when the task is
  in its class, so a failure on ``fixed_operator`` is the task's, not the optimiser's;
- ``x2``: B1 and B2 with and without ``positional="learned_absolute"`` on a signed low-rank ``A*``
  and on a row-stochastic ``A* = softmax(rank-r* logits)`` (a softmax head cannot mix with signs).

Relative excess risk = held-out ``mean ||f(X) − f*(X)||² / mean ||f*(X)||²`` on ``n_test`` fresh
samples against the clean target (SPEC §1); B0 also records the exact population value (SPEC §5).
Each run stores the mean realised mixer ``E_X M(X)`` (over the first ``n_mixer`` held-out inputs,
heads averaged) beside the task's, so the mixer figure is rebuilt from the store alone.
"""

from __future__ import annotations

import numpy as np
import torch

from ...models import MemberSpec
from ...registry import EXPERIMENTS, STUDENTS, TASKS
from ...results import RunResult, RunSpec
from ...spectra import estimate_all
from ...theory import clean_signal, population_excess_risk
from ...training import FixedData, FreshData, TrainConfig
from ...training.evaluation import held_out_excess
from ...training.trainer import DTYPES
from ..base import (
    ClaimContext,
    Experiment,
    config_params,
    derive_seed,
    flat_params,
    member_result,
    moved_keys,
    spec_config,
)
from ..device import train_on
from .analysis import analyse, fill_settings
from .claims import CLAIMS
from .config import SCALE_SETTINGS, E3Config


def task_of(params: dict):
    """The task a run's params describe (``task.kind`` names it in ``TASKS``, the other ``task.*`` keys)."""
    p = {k[5:]: v for k, v in params.items() if k.startswith("task.")}
    return TASKS.build(p.pop("kind"), **p)


@EXPERIMENTS.register(
    summary="interpolation ladder B0–B3 on fixed_operator; controls; learned positions (C4, X2)"
)
class E3Ladder(Experiment):
    run_cost, analysis_cost = 0.37, 2.7  # CPU s at quick scale (bench/profile_reproduce.py)
    title = "Interpolation ladder B0 → B3 on a fixed operator"
    declared_claims = CLAIMS
    analysis_function = analyse
    member_params = ("rank",)
    seeds_share_group = True  # all seeds and ranks of one (role, task, rung, V, positional, heads, training)
    config_class = E3Config
    renamed_keys = {
        "n_mix": "n_mixer",
        "task_seed": "task.seed",
        "teacher_c": "task.c",
        **moved_keys("task", "n d r_star spectrum sigma logit_scale"),
        **moved_keys("verdict", "eps_floor c4_fail c4_ratio x2_min_steps"),
    }

    scale_settings = SCALE_SETTINGS

    # -- the grid --------------------------------------------------------------------------
    def _task_params(self, kind: str, operator: str = "low_rank") -> dict:
        c = self.cfg
        p = {"task.kind": kind, **config_params(c.task, "task", ("n", "d", "r_star", "spectrum", "sigma"))}
        if kind == "linear_qk_teacher":
            p["task.c"] = c.task.c
        else:
            p["task.operator"] = operator
            if operator == "row_stochastic":
                p["task.logit_scale"] = c.task.logit_scale
        return p

    def _runs(
        self,
        role: str,
        task: dict,
        rung: str,
        v: str,
        ranks,
        positional: str,
        n_heads: int,
        train: TrainConfig,
    ) -> list[RunSpec]:
        c = self.cfg
        base = {
            "role": role,
            **task,
            "task_seed": c.task.seed,  # a param apart from task.*: the task is built from task.*
            "n_test": c.n_test,
            "n_mix": c.n_mixer,  # the stored param keeps its name: run ids are the store's key
            "rung": rung,
            "v": v,
            "positional": positional,
            "init_scale": c.b0_init_scale if rung == "B0" else c.init_scale,
            **flat_params(train, "train"),
        }
        if rung != "B0":
            base["n_heads"] = n_heads
        if rung in ("B2", "B3"):
            base["temperature"] = c.temperature
        return [RunSpec(self.name, {**base, "rank": r}, seed) for r in ranks for seed in range(c.seeds)]

    def prepare(self, table, ok, records):
        """The runs that did not diverge with their setting columns as labels (``"-"`` where absent)."""
        return (fill_settings(ok) if len(table) else ok), ClaimContext(records)

    def specs(self) -> list[RunSpec]:
        c = self.cfg
        fixed = self._task_params("fixed_operator")
        out = []
        for rung in c.rungs:
            for v in c.v_settings:
                out += self._runs("ladder", fixed, rung, v, c.ladder_ranks(rung), "none", c.n_heads, c.train)
        if c.control_b:
            teacher = self._task_params("linear_qk_teacher")
            for v in c.v_settings:
                out += self._runs(
                    "control_b",
                    teacher,
                    "B1",
                    v,
                    sorted({c.task.r_star, c.task.d}),
                    "none",
                    c.n_heads,
                    c.train,
                )
        x2_ranks = sorted(set(c.x2_ranks) or {c.task.r_star, c.task.d})
        for operator in c.x2_operators if c.positional_rungs else ():
            task = self._task_params("fixed_operator", operator)
            for rung in c.positional_rungs:
                for v in c.x2_v_settings:
                    for heads in c.x2_heads:
                        for positional in ("none", "learned_absolute"):
                            out += self._runs("x2", task, rung, v, x2_ranks, positional, heads, c.x2_train)
        return out

    # -- one ensemble ----------------------------------------------------------------------
    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        p0 = group[0].params
        task = task_of(p0)
        teacher = task.teacher(torch.Generator().manual_seed(self.seed("teacher", task, p0["task_seed"])))
        train = spec_config(group[0], "train", TrainConfig)
        dtype = DTYPES[train.dtype]
        model = build_student(group, teacher, dtype)
        outcome = train_on(self.device, model, training_data(teacher, task, p0["task_seed"], train), train)
        test = teacher.sample(
            p0["n_test"], torch.Generator().manual_seed(self.seed("test", task, p0["task_seed"]))
        )
        metrics, mixers, target_mixer = evaluate(model, teacher, test, p0["n_mix"])
        results = []
        for m, spec in enumerate(group):
            row = {k: v[m] for k, v in metrics.items()}
            row.update(
                train_loss=outcome.final_loss[m],
                steps_run=outcome.steps_run[m],
                noise_floor=task.sigma**2,
                full_rank=float(spec.params["rank"] == (task.n if p0["rung"] == "B0" else task.d)),
            )
            curves = {"mean_mixer": mixers[m].tolist(), "target_mean_mixer": target_mixer.tolist()}
            results.append(
                member_result(
                    spec,
                    m,
                    outcome,
                    row,
                    keep=("steps_run", "noise_floor", "full_rank", "signal"),
                    curves=curves,
                )
            )
        return results


def build_student(group: list[RunSpec], teacher, dtype: torch.dtype):
    """The ensemble of one group: one member per spec (its rank, init scale and a run-derived seed)."""
    p0 = group[0].params
    members = [
        MemberSpec(s.params["rank"], s.params["init_scale"], derive_seed(f"{E3Ladder.name}/init", s.run_id))
        for s in group
    ]
    return STUDENTS.build(
        p0["rung"],
        members,
        n=teacher.n,
        d=teacher.d,
        d_v=teacher.d_v,
        dtype=dtype,
        positional=p0["positional"],
        V_known=teacher.V.to(dtype) if p0["v"] == "known" else None,
        **{k: p0[k] for k in ("n_heads", "temperature") if k in p0},  # the rung's spec has what it uses
    )


def training_data(teacher, task, task_seed: int, train: TrainConfig):
    """Fresh batches (``n_samples = 0``) or one fixed data set, from a generator that depends on the
    task only: every rung and role trained on this task sees exactly the same data."""
    g = torch.Generator().manual_seed(derive_seed(f"{E3Ladder.name}/data", task, task_seed))
    dtype = DTYPES[train.dtype]
    if not train.n_samples:
        return FreshData(teacher, train.batch_size, g, dtype)
    batch = teacher.sample(train.n_samples, g, dtype=dtype)
    return FixedData(batch.X, batch.Y, train.batch_size, g)


def evaluate(model, teacher, test, n_mix: int) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Per-model metrics ``(M,)`` on the held-out set, the models' mean mixers ``(M, n, n)`` and the
    task's ``(n, n)`` (``E_X M(X)`` over the first ``n_mix`` held-out inputs, heads averaged)."""
    dtype = next(model.parameters()).dtype
    excess = held_out_excess(model, test.X.to(dtype), test.clean)
    signal = float(test.clean.pow(2).mean())
    out = {"excess": excess, "signal": np.full(model.n_models, signal), "rel_excess": excess / signal}
    ops = model.operators()
    if "A" in ops and hasattr(teacher, "A"):  # B0 on a fixed operator: exact population values (SPEC §5)
        truth = teacher.truth
        pop = population_excess_risk(ops["A"], ops["V"], truth["A"], truth["V"])
        out["rel_excess_population"] = pop / clean_signal(truth["A"], truth["V"])
    X_mix = test.X[:n_mix].to(dtype)
    mean_mixer = model.mixers(X_mix).double().mean(dim=(1, 2)).numpy()  # (M, n, n), over inputs and heads
    target = teacher.mixer(test.X[:n_mix]).mean(0).numpy()  # (n, n)
    out["mixer_rel_error"] = np.linalg.norm(mean_mixer - target, axis=(1, 2)) / np.linalg.norm(target)
    name, s = next(iter(model.spectra().items()))  # A (M, n) or K (M, h, r_max)
    est = estimate_all(s)
    for key in ("energy_effective_rank", "numerical_rank"):
        value = est[key]
        out[f"{name}_{key}"] = value.mean(-1) if value.ndim > 1 else value  # heads averaged
    return out, mean_mixer, target
