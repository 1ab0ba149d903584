"""``bench train``: the ensemble engine against two ways a PyTorch user trains many small models.

All three sides train the same models (the same initial weights, member by member) on the same
pre-generated batches with Adam:

- **ensemble**: :func:`~entropic_bound.training.train_ensemble` (one fused forward/backward per
  step for all models, chunked to ``max_memory_mb``);
- **per-model** ("naive"): one ``nn.Module`` and one ``torch.optim.Adam`` per model
  (:mod:`entropic_bound.models.reference`), trained one after another;
- **vmap**: the torch.func model-ensembling recipe (PyTorch tutorial "Model ensembling"):
  ``torch.func.stack_module_state`` over the per-model modules, ``functional_call`` of a
  meta-device copy under ``torch.vmap`` over the stacked parameters, one ``Adam`` over them. Adam
  is element-wise, so one Adam over stacked parameters is M independent Adams.

The sides are measured alternately in the same run (``repeats`` rounds; the best of each is
reported, since the machines are noisy) next to a float32 GEMM peak measured in the same process,
on ``threads`` torch threads (default 1, as ``run``). Rates are given by the wall clock
(``*_model_steps_per_s``, ``ratio``, ``ratio_vs_vmap``) and by the process CPU clock
(``*_per_cpu_s``, ``ratio_cpu``, ``ratio_vs_vmap_cpu``), which on one thread barely moves when
other processes load the machine.

FLOPs are counted analytically for the per-model reference formulation (``Q = X W_Q``,
``K = X W_K``, each head ``(S X) V``), the same count for every side although the ensemble's fused
kernel route needs fewer; per model and sample (``h`` heads of rank ``r``, ``X`` needs no grad)::

    B1, B2: h (8 n d r + 6 n² r + 4 n² d + 6 n d d_v)      (4 n d d_v instead of 6 when V is known)
    B3:     3 × [h (4 n d r + 2 n² r + 2 n² d + 2 n d²) + 4 n d f + 2 n d d_v],  f the FFN width

(B1/B2 exact: checked against ``torch.utils.flop_counter``; B3 the usual 3 × forward.)
model-steps/s × batch × (F + G) is the achieved FLOP rate.
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn

from ..config import param, validate
from ..errors import UserInputError
from ..models.base import MemberSpec
from ..models.chunking import chunk_members
from ..registry import STUDENTS
from ..training import TrainConfig, per_model_loss, train_ensemble

STUDENT_RUNGS = {"linear_qk": "B1", "softmax": "B2", "block": "B3"}
FLOP_FORMULA = (
    "per model-sample: h(8ndr + 6n²r + 4n²d + 6nd·d_v) (4nd·d_v if V known); "
    "B3: 3×(h(4ndr + 2n²r + 2n²d + 2nd²) + 4ndf + 2nd·d_v)"
)


@dataclass(frozen=True)
class Workload:
    """One benchmark workload; ``rank = 0`` means full rank ``d``, ``threads = 0`` torch's own count."""

    student: str = param(choices=tuple(STUDENT_RUNGS))
    models: int = param(ge=1)
    n: int = param(ge=1)
    d: int = param(ge=1)
    batch: int = param(ge=1)
    steps: int = param(ge=1)
    rank: int = param(0, ge=0)
    heads: int = param(1, ge=1)
    v_known: bool = False
    lr: float = param(1e-3, gt=0.0)
    seed: int = 0
    repeats: int = param(2, ge=1)
    # measured: chunks of ~6 models (64 MB) beat 3 (32 MB) and one large ensemble at batch 256
    max_memory_mb: int = param(64, ge=0, doc="activation budget of one ensemble chunk; 0: no limit")
    threads: int = param(1, ge=0, doc="torch threads; 0: torch's own choice")

    def check(self) -> None:
        if self.rank > self.d:
            raise UserInputError(
                f"The 'rank' parameter must be an int in [1, {self.d}] (at most d). Got {self.rank} instead."
            )

    @property
    def r(self) -> int:
        return self.rank or self.d


def flops_per_model_sample(w: Workload) -> int:
    """Forward + backward FLOPs of one model on one sample (formula in the module docstring)."""
    n, d, r, h, dv = w.n, w.d, w.r, w.heads, w.d
    if w.student == "block":
        f = 4 * d
        return 3 * (
            h * (4 * n * d * r + 2 * n * n * r + 2 * n * n * d + 2 * n * d * d)
            + 4 * n * d * f
            + 2 * n * d * dv
        )
    return h * (8 * n * d * r + 6 * n * n * r + 4 * n * n * d + (4 if w.v_known else 6) * n * d * dv)


def gemm_peak_gflops(size: int = 1024, repeats: int = 5, device: str = "cpu") -> float:
    """Best float32 ``size³`` GEMM rate of this process, GFLOP/s."""
    a = torch.randn(size, size, device=device)
    b = torch.randn(size, size, device=device)
    best = float("inf")
    for _ in range(repeats + 1):
        _sync(device)
        t = time.perf_counter()
        a @ b
        _sync(device)
        best = min(best, time.perf_counter() - t)
    return 2 * size**3 / best / 1e9


def _sync(device: str) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


@dataclass
class Elapsed:
    """Wall and process CPU seconds of one timed block. On one thread CPU time barely moves when
    other processes load the machine, where wall time does: both are reported."""

    wall: float = 0.0
    cpu: float = 0.0


@contextlib.contextmanager
def stopwatch(device: str) -> Iterator[Elapsed]:
    elapsed = Elapsed()
    _sync(device)
    wall, cpu = time.perf_counter(), time.process_time()
    yield elapsed
    _sync(device)
    elapsed.wall, elapsed.cpu = time.perf_counter() - wall, time.process_time() - cpu


class _Batches:
    """Pre-generated batches shared by every side (speed does not depend on the target values)."""

    def __init__(self, w: Workload, device: str) -> None:
        g = torch.Generator().manual_seed(w.seed)
        self.items = [
            (
                torch.randn(w.batch, w.n, w.d, generator=g).to(device),
                torch.randn(w.batch, w.n, w.d, generator=g).to(device),
            )
            for _ in range(w.steps + 1)
        ]

    def batch(self, step: int) -> tuple[Tensor, Tensor]:
        return self.items[step % len(self.items)]

    def loss(self, model, step: int) -> Tensor:
        return per_model_loss(model, *self.batch(step))  # (M,)


def build_ensemble(w: Workload, members, device: str):
    V = (
        torch.linalg.qr(torch.randn(w.d, w.d, generator=torch.Generator().manual_seed(w.seed)))[0]
        if w.v_known
        else None
    )
    return STUDENTS.build(
        STUDENT_RUNGS[w.student],
        members,
        n=w.n,
        d=w.d,
        d_v=w.d,
        V_known=V,
        n_heads=w.heads,
        dtype=torch.float32,
        device=device,
    )


def time_ensemble(w: Workload, members, data: _Batches, device: str) -> Elapsed:
    """Seconds to train all members with the ensemble engine (chunked to ``max_memory_mb``)."""
    cfg = TrainConfig(
        optimizer="adam",
        lr=w.lr,
        steps=w.steps,
        n_samples=0,
        batch_size=w.batch,
        checkpoints=0,
        dtype="float32",
    )
    chunks = [list(members)]
    if w.max_memory_mb:
        per = STUDENTS.get(STUDENT_RUNGS[w.student]).training_bytes(
            n=w.n, d=w.d, d_v=w.d, rank=w.r, batch=w.batch, n_heads=w.heads, itemsize=4
        )
        chunks = chunk_members(members, w.max_memory_mb * 2**20, per)
    models = [build_ensemble(w, chunk, device) for chunk in chunks]
    with stopwatch(device) as elapsed:
        for model in models:
            train_ensemble(model, data, cfg)
    return elapsed


def time_naive(w: Workload, modules, data: _Batches, device: str) -> Elapsed:
    """Seconds to train each plain module with its own Adam, one after another."""
    modules = copy.deepcopy(modules)
    with stopwatch(device) as elapsed:
        for module in modules:
            opt = torch.optim.Adam([p for p in module.parameters() if p.requires_grad], lr=w.lr)
            for step in range(w.steps):
                X, Y = data.batch(step)
                loss = torch.nn.functional.mse_loss(module(X), Y)  # what a researcher writes
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
    return elapsed


class VmapEnsemble:
    """The torch.func recipe: the modules' parameters stacked, one functional model under ``vmap``.

    ``params`` maps each parameter name to a ``(M, …)`` leaf tensor (frozen ones keep
    ``requires_grad = False``); :meth:`losses` is every model's own mean squared error, ``(M,)``.
    """

    def __init__(self, modules: list[nn.Module]) -> None:
        self.params, self.buffers = torch.func.stack_module_state(modules)
        base = copy.deepcopy(modules[0]).to("meta")  # structure only; weights come from params

        def one_loss(params: dict, buffers: dict, X: Tensor, Y: Tensor) -> Tensor:
            pred = torch.func.functional_call(base, (params, buffers), (X,))  # (B, n, d_v)
            return torch.nn.functional.mse_loss(pred, Y)

        self._losses = torch.vmap(one_loss, in_dims=(0, 0, None, None))

    def trainable(self) -> list[Tensor]:
        return [p for p in self.params.values() if p.requires_grad]

    def losses(self, X: Tensor, Y: Tensor) -> Tensor:
        return self._losses(self.params, self.buffers, X, Y)  # (M,)


def time_vmap(w: Workload, modules, data: _Batches, device: str) -> Elapsed:
    """Seconds to train all modules as one :class:`VmapEnsemble` with one Adam."""
    ensemble = VmapEnsemble(modules)
    with stopwatch(device) as elapsed:
        opt = torch.optim.Adam(ensemble.trainable(), lr=w.lr)
        for step in range(w.steps):
            # the sum's gradient w.r.t. model m's slice is the gradient of model m's own loss
            loss = ensemble.losses(*data.batch(step)).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return elapsed


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run with ``threads`` torch threads (0: leave torch's count), restoring the count after."""
    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run_bench(w: Workload, device: str = "cpu") -> dict:
    """Measure the three sides ``w.repeats`` times, alternately; returns the JSON-ready result."""
    validate(w)
    with torch_threads(w.threads):
        return _measure(w, device)


def _measure(w: Workload, device: str) -> dict:
    from ..models.reference import member_module

    members = [MemberSpec(rank=w.r, init_scale=w.d**-0.5, seed=w.seed + i) for i in range(w.models)]
    data = _Batches(w, device)
    init = build_ensemble(w, members, device)
    modules = [member_module(init, m) for m in range(w.models)]
    peak = gemm_peak_gflops(device=device)
    sides = {
        "ensemble": lambda w, k: time_ensemble(w, members[:k], data, device),
        "naive": lambda w, k: time_naive(w, modules[:k], data, device),
        "vmap": lambda w, k: time_vmap(w, modules[:k], data, device),
    }
    tiny = Workload(**{**asdict(w), "steps": 2, "models": min(w.models, 2), "repeats": 1})
    for side in sides.values():  # warm-up of every code path
        side(tiny, tiny.models)
    rounds: dict[str, list[Elapsed]] = {name: [] for name in sides}
    for _ in range(w.repeats):
        for name, side in sides.items():
            rounds[name].append(side(w, w.models))
    return _result(w, device, rounds, peak)


def _result(w: Workload, device: str, rounds: dict[str, list[Elapsed]], peak: float) -> dict:
    """Best rate of each side (wall and CPU clocks), their ratios, and the ratio of every round."""
    work = w.models * w.steps  # model-steps per side and round
    flops = flops_per_model_sample(w) * w.batch
    wall = {name: [work / e.wall for e in runs] for name, runs in rounds.items()}
    cpu = {name: [work / e.cpu for e in runs] for name, runs in rounds.items()}
    best = {name: max(rates) for name, rates in wall.items()}
    best_cpu = {name: max(rates) for name, rates in cpu.items()}
    out = {"workload": {**asdict(w), "rank": w.r, "device": str(device), "threads": torch.get_num_threads()}}
    for name in rounds:
        out[f"{name}_model_steps_per_s"] = best[name]
        out[f"{name}_model_steps_per_cpu_s"] = best_cpu[name]
    for key, other in (("ratio", "naive"), ("ratio_vs_vmap", "vmap")):
        out[key] = best["ensemble"] / best[other]
        out[f"{key}_cpu"] = best_cpu["ensemble"] / best_cpu[other]
        per_round = [e / o for e, o in zip(wall["ensemble"], wall[other])]
        out["ratios_per_round" if other == "naive" else "ratios_vs_vmap_per_round"] = per_round
    for name in rounds:
        out[f"{name}_gflops"] = best[name] * flops / 1e9
    out |= {
        "gemm_peak_gflops": peak,
        "ensemble_fraction_of_peak": best["ensemble"] * flops / 1e9 / peak,
        "flops_per_model_step": flops,
        "flop_formula": FLOP_FORMULA,
    }
    return out
