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
samples against the clean target; B0 also records the exact population value.
Each run stores the mean realised mixer ``E_X M(X)`` (over the first ``n_mixer`` held-out inputs,
heads averaged) beside the task's, so the mixer figure is rebuilt from the store alone.
"""

from __future__ import annotations

import numpy as np
import torch

from ...models import MemberSpec
from ...registry import STUDENTS, TASKS
from ...results import RunResult, RunSpec
from ...spectra import estimate_all
from ...stats.convergence import convergence
from ...theory import clean_signal, population_excess_risk
from ...training import FixedData, FreshData, TrainConfig
from ...training.evaluation import held_out_excess
from ...training.trainer import DTYPES, learning_rate
from ..framework.base import Experiment
from ..framework.device import train_on
from ..framework.draws import Seeds
from ..framework.grid import member_result
from ..framework.params import to_params
from ..framework.parts import parts_of
from ..framework.verdict import ClaimContext
from . import analysis, claims, config
from .analysis import fill_settings


def task_of(params: dict):
    """The task a run's params describe (``task.kind`` names it in ``TASKS``, the other ``task.*`` keys)."""
    p = {k[5:]: v for k, v in params.items() if k.startswith("task.")}
    return TASKS.build(p.pop("kind"), **p)


class E3Ladder(Experiment):
    config_class, scale_settings, declared_claims, analysis_function = parts_of(config, claims, analysis)
    run_cost, analysis_cost = 0.37, 2.7  # CPU s at quick scale (bench/profile_reproduce.py)
    title = "Interpolation ladder B0 → B3 on a fixed operator"
    member_params = ("rank",)
    seeds_share_group = True  # all seeds and ranks of one (role, task, rung, V, positional, heads, training)

    # -- the grid --------------------------------------------------------------------------
    def _task_params(self, kind: str, operator: str = "low_rank") -> dict:
        c = self.cfg
        p = {"task.kind": kind, **to_params(c.task, "task", ("n", "d", "r_star", "spectrum", "sigma"))}
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
        c, student = self.cfg, STUDENTS.get(rung)
        base = {
            "role": role,
            **task,
            "task_seed": c.task.seed,  # a param apart from task.*: the task is built from task.*
            "n_test": c.n_test,
            "n_mix": c.n_mixer,  # the stored param keeps its name: run ids are the store's key
            "rung": rung,
            "v": v,
            "positional": positional,
            "init_scale": c.b0_init_scale if student.fixed_mixer else c.init_scale,
            **to_params(train, "train"),
        }
        # a run's params hold only the options its student accepts (run ids hash the params)
        if "n_heads" in student.accepts:
            base["n_heads"] = n_heads
        if "temperature" in student.accepts:
            base["temperature"] = c.temperature
        seeds = c.x2_seed_count() if role == "x2" else c.seeds
        return [RunSpec(self.name, {**base, "rank": r}, seed) for r in ranks for seed in range(seeds)]

    def student_of(self, spec: RunSpec) -> str:
        return spec.params["rung"]

    def train_config(self, spec: RunSpec) -> TrainConfig:
        """X2's runs train with ``x2_train``, every other role with ``train``."""
        return self.cfg.x2_train if spec.params["role"] == "x2" else self.cfg.train

    def prepare(self, table, ok, records, seeds):
        """The runs that did not diverge with their setting columns as labels (``"-"`` where absent)."""
        return (fill_settings(ok) if len(table) else ok), ClaimContext(records)

    def specs(self) -> list[RunSpec]:
        c = self.cfg
        fixed = self._task_params("fixed_operator")
        out = []
        for name in c.rungs:
            for v in c.v_settings:
                out += self._runs("ladder", fixed, name, v, c.ladder_ranks(name), "none", c.n_heads, c.train)
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
            for name in c.positional_rungs:
                for v in c.x2_v_settings:
                    for heads in c.x2_heads:
                        for positional in ("none", "learned_absolute"):
                            out += self._runs("x2", task, name, v, x2_ranks, positional, heads, c.x2_train)
        return out

    # -- one ensemble ----------------------------------------------------------------------
    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        p0, seeds = group[0].params, self.seeds_of(group)
        task = task_of(p0)
        teacher = task.teacher(torch.Generator().manual_seed(seeds.seed("teacher", task, p0["task_seed"])))
        train = self.train_config(group[0])
        dtype = DTYPES[train.dtype]
        model = build_student(group, teacher, dtype, seeds)
        # the held-out set is drawn from its own generator: drawing it before training changes nothing
        test = teacher.sample(
            p0["n_test"], torch.Generator().manual_seed(seeds.seed("test", task, p0["task_seed"]))
        )
        tracker = ExcessCurve(model, test, train)
        data = training_data(teacher, task, p0["task_seed"], train, seeds)
        outcome = train_on(self.device, model, data, train, on_step=tracker)
        metrics, mixers, target_mixer = evaluate(model, teacher, test, p0["n_mix"])
        results = []
        for m, spec in enumerate(group):
            row = {k: v[m] for k, v in metrics.items()}
            row.update(
                train_loss=outcome.final_loss[m],
                steps_run=outcome.steps_run[m],
                noise_floor=task.sigma**2,
                full_rank=float(spec.params["rank"] == STUDENTS.get(p0["rung"]).full_rank(task.n, task.d)),
                **tracker.convergence(m),
            )
            curves = {
                "mean_mixer": mixers[m].tolist(),
                "target_mean_mixer": target_mixer.tolist(),
                **tracker.member(m),
            }
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


#: Held-out points of the excess curve (evenly spaced in steps, so the convergence rule's last quarter
#: holds several) and the held-out samples each point uses.
EXCESS_POINTS, EXCESS_SAMPLES = 16, 256


class ExcessCurve:
    """``on_step`` hook: the held-out relative excess of every member at :data:`EXCESS_POINTS` evenly spaced
    steps (on the first :data:`EXCESS_SAMPLES` held-out samples), for the convergence rule.
    It only reads the model, so the trained parameters and every stored number are unchanged."""

    def __init__(self, model, test, train: TrainConfig) -> None:
        self.model, steps = model, train.steps
        # training time in gradient-flow units (summed learning rate): under the cosine schedule the last
        # quarter of *steps* moves the weights little, so a flat excess there is the schedule, not convergence
        self.time = np.concatenate([[0.0], np.cumsum([learning_rate(train, s) for s in range(steps)])])
        self.X, self.clean = test.X[:EXCESS_SAMPLES], test.clean[:EXCESS_SAMPLES]
        self.signal = float(test.clean.double().pow(2).mean())
        self.at = {max(round(steps * k / EXCESS_POINTS), 1) for k in range(1, EXCESS_POINTS + 1)}
        self.step: list[int] = []
        self.values: list[np.ndarray] = []

    def __call__(self, step: int) -> None:
        if step + 1 in self.at:  # called after the update of step ``step``: step + 1 updates done
            self.step.append(step + 1)
            self.values.append(held_out_excess(self.model, self.X, self.clean) / self.signal)

    def convergence(self, m: int) -> dict:
        """``converged`` (1/0; NaN without a curve) and ``relative_drop`` of member ``m`` by the stated
        rule (:func:`~entropic_bound.stats.convergence.convergence`, its default tolerance and window) on
        the excess against training time (summed learning rate): the last quarter of the time."""
        if len({*self.step}) < 2:
            return {"converged": float("nan"), "relative_drop": float("nan")}
        c = convergence(self.time[self.step], [float(v[m]) for v in self.values])
        return {"converged": float(c["converged"]), "relative_drop": c["relative_drop"]}

    def member(self, m: int) -> dict:
        return {"excess_step": self.step, "rel_excess_curve": [float(v[m]) for v in self.values]}


def build_student(group: list[RunSpec], teacher, dtype: torch.dtype, seeds: Seeds):
    """The ensemble of one group: one member per spec (its rank, init scale and a run-derived seed)."""
    p0 = group[0].params
    members = [
        MemberSpec(s.params["rank"], s.params["init_scale"], seeds.of_run("init", s.run_id)) for s in group
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


def training_data(teacher, task, task_seed: int, train: TrainConfig, seeds: Seeds):
    """Fresh batches (``n_samples = 0``) or one fixed data set, from a generator that depends on the
    task (and the draw) only: every rung and role trained on this task sees exactly the same data."""
    g = torch.Generator().manual_seed(seeds.seed("data", task, task_seed))
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
    if "A" in ops and hasattr(teacher, "A"):  # B0 on a fixed operator: exact population values
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
