"""``bench train``: the ensemble engine against the per-model PyTorch loop, on one workload.

Both sides train the same models (the same initial weights, member by member) on the same
pre-generated batches with Adam: the ensemble through :func:`~entropic_bound.training.train_ensemble`
(one fused forward/backward per step for all models), the baseline as one ``nn.Module`` and one
``torch.optim.Adam`` per model (:mod:`entropic_bound.models.reference`), trained one after another.
They are measured alternately in the same run (``repeats`` rounds; best of each is reported,
since the machines are noisy) next to a float32 GEMM peak measured in the same process.

FLOPs are counted analytically for the per-model reference formulation (``Q = X W_Q``,
``K = X W_K``, each head ``(S X) V``), the same count for both sides although the ensemble's fused
kernel route needs fewer; per model and sample (``h`` heads of rank ``r``, ``X`` needs no grad)::

    B1, B2: h (8 n d r + 6 n² r + 4 n² d + 6 n d d_v)      (4 n d d_v instead of 6 when V is known)
    B3:     3 × [h (4 n d r + 2 n² r + 2 n² d + 2 n d²) + 4 n d f + 2 n d d_v],  f the FFN width

(B1/B2 exact: checked against ``torch.utils.flop_counter``; B3 the usual 3 × forward.)
model-steps/s × batch × (F + G) is the achieved FLOP rate.
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass

import torch

from .errors import UserInputError
from .models._attention import check_positive_int
from .models.base import MemberSpec
from .models.chunking import activation_bytes_per_member, chunk_members

STUDENT_RUNGS = {"linear_qk": "B1", "softmax": "B2", "block": "B3"}
FLOP_FORMULA = (
    "per model-sample: h(8ndr + 6n²r + 4n²d + 6nd·d_v) (4nd·d_v if V known); "
    "B3: 3×(h(4ndr + 2n²r + 2n²d + 2nd²) + 4ndf + 2nd·d_v)"
)


@dataclass(frozen=True)
class Workload:
    """One benchmark workload; ``rank = 0`` means full rank ``d``."""

    student: str
    models: int
    n: int
    d: int
    batch: int
    steps: int
    rank: int = 0
    heads: int = 1
    v_known: bool = False
    lr: float = 1e-3
    seed: int = 0
    repeats: int = 2
    max_memory_mb: int = (
        64  # measured: chunks of ~6 models (64 MB) beat 3 (32 MB) and one large ensemble at batch 256
    )

    def check(self) -> None:
        if self.student not in STUDENT_RUNGS:
            raise UserInputError(
                f"The 'student' parameter must be one of {', '.join(STUDENT_RUNGS)}. Got {self.student!r} instead."
            )
        for name in ("models", "n", "d", "batch", "steps", "heads", "repeats"):
            check_positive_int(name, getattr(self, name))
        if not 0 <= self.rank <= self.d:
            raise UserInputError(
                f"The 'rank' parameter must be an int in [1, {self.d}] (at most d). Got {self.rank} instead."
            )
        if self.max_memory_mb < 0:
            raise UserInputError(
                f"The 'max_memory' parameter must be >= 0 (0: no limit). Got {self.max_memory_mb} instead."
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


class _Batches:
    """Pre-generated batches shared by both sides (speed does not depend on the target values)."""

    def __init__(self, w: Workload, device: str) -> None:
        g = torch.Generator().manual_seed(w.seed)
        self.items = [
            (
                torch.randn(w.batch, w.n, w.d, generator=g).to(device),
                torch.randn(w.batch, w.n, w.d, generator=g).to(device),
            )
            for _ in range(w.steps + 1)
        ]

    def batch(self, step: int):
        return self.items[step % len(self.items)]

    def loss(self, model, step: int):
        from .training import per_model_loss

        return per_model_loss(model, *self.batch(step))  # (M,)


def build_ensemble(w: Workload, members, device: str):
    from .models.block import TransformerBlockEnsemble
    from .models.linear_qk import LinearQKEnsemble
    from .models.softmax_attention import SoftmaxAttentionEnsemble

    cls = {"B1": LinearQKEnsemble, "B2": SoftmaxAttentionEnsemble, "B3": TransformerBlockEnsemble}[
        STUDENT_RUNGS[w.student]
    ]
    V = (
        torch.linalg.qr(torch.randn(w.d, w.d, generator=torch.Generator().manual_seed(w.seed)))[0]
        if w.v_known
        else None
    )
    return cls(members, n=w.n, d=w.d, d_v=w.d, V_known=V, n_heads=w.heads, dtype=torch.float32, device=device)


def time_ensemble(w: Workload, members, data: _Batches, device: str) -> float:
    """Seconds to train all members with the ensemble engine (chunked to ``max_memory_mb``)."""
    from .training import TrainConfig, train_ensemble

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
        per = activation_bytes_per_member(
            n=w.n,
            d=w.d,
            d_v=w.d,
            batch=w.batch,
            n_heads=w.heads,
            ffn_width=4 * w.d if w.student == "block" else 0,
        )
        chunks = chunk_members(members, w.max_memory_mb * 2**20, per)
    models = [build_ensemble(w, chunk, device) for chunk in chunks]
    _sync(device)
    t = time.perf_counter()
    for model in models:
        train_ensemble(model, data, cfg)
    _sync(device)
    return time.perf_counter() - t


def time_naive(w: Workload, modules, data: _Batches, device: str) -> float:
    """Seconds to train each plain module with its own Adam, one after another."""
    modules = copy.deepcopy(modules)
    _sync(device)
    t = time.perf_counter()
    for module in modules:
        opt = torch.optim.Adam([p for p in module.parameters() if p.requires_grad], lr=w.lr)
        for step in range(w.steps):
            X, Y = data.batch(step)
            loss = torch.nn.functional.mse_loss(module(X), Y)  # what a researcher writes
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    _sync(device)
    return time.perf_counter() - t


def run_bench(w: Workload, device: str = "cpu") -> dict:
    """Measure both sides ``w.repeats`` times, alternately; returns the JSON-ready result."""
    from .models.reference import member_module

    w.check()
    members = [MemberSpec(rank=w.r, init_scale=w.d**-0.5, seed=w.seed + i) for i in range(w.models)]
    data = _Batches(w, device)
    init = build_ensemble(w, members, device)
    modules = [member_module(init, m) for m in range(w.models)]
    peak = gemm_peak_gflops(device=device)
    tiny = Workload(**{**asdict(w), "steps": 2, "models": min(w.models, 2), "repeats": 1})
    time_ensemble(tiny, members[: tiny.models], data, device)  # warm-up of both code paths
    time_naive(tiny, modules[: tiny.models], data, device)
    ens, naive = [], []
    for _ in range(w.repeats):
        ens.append(w.models * w.steps / time_ensemble(w, members, data, device))
        naive.append(w.models * w.steps / time_naive(w, modules, data, device))
    flops = flops_per_model_sample(w) * w.batch
    best_e, best_n = max(ens), max(naive)
    return {
        "workload": {**asdict(w), "rank": w.r, "device": str(device), "threads": torch.get_num_threads()},
        "ensemble_model_steps_per_s": best_e,
        "naive_model_steps_per_s": best_n,
        "ratio": best_e / best_n,
        "ratios_per_round": [e / n for e, n in zip(ens, naive)],
        "ensemble_gflops": best_e * flops / 1e9,
        "naive_gflops": best_n * flops / 1e9,
        "gemm_peak_gflops": peak,
        "ensemble_fraction_of_peak": best_e * flops / 1e9 / peak,
        "flops_per_model_step": flops,
        "flop_formula": FLOP_FORMULA,
    }
