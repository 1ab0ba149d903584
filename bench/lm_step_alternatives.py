"""What E7's language-model step would cost done differently, against the GEMM peak, one run, one thread.

    python bench/lm_step_alternatives.py [--json] [--rounds 3] [--steps 8] [--shapes paper]
                                         [--no-compile]

The step of ``bench/bench_lm_step.py`` (the trainer's, the model E7 trains) beside:

- **compiled**: the same step with each member chunk's loss under ``torch.compile`` (inductor);
  the same model, float32 round-off apart; its cold compile time is reported;
- **tanh_gelu**: GELU's tanh approximation instead of the exact erf — a different model;
- **relu / no_layernorm / no_attention**: ReLU for GELU, the layer norms skipped, attention
  replaced by its values (each query reads its own value) — *not* models anyone would train:
  lower bounds on what the elementwise and attention kernels cost, and so upper bounds on the
  fraction of the GEMM peak a step of this shape can reach in eager PyTorch;
- **bare**: all three removed together: what is left is the matrix products, the embedding, the
  cross-entropy, AdamW and the backward's bookkeeping.

Sides are timed in interleaved rounds (process CPU time, medians) beside a 1024 × 1024 float32 GEMM;
FLOPs as in ``bench_lm_step.py`` (the model's, whatever a side skips), so ``fraction_of_peak`` is
comparable across sides.
"""

from __future__ import annotations

import json
import statistics
import time
import warnings
from contextlib import ExitStack
from unittest import mock

import bench_lm_step as base
import torch
import torch.nn.functional as F

_gelu = F.gelu
REPLACED = {  # side: functions of torch.nn.functional replaced while it steps
    "as_trained": {},
    "tanh_gelu": {"gelu": lambda h: _gelu(h, approximate="tanh")},
    "relu": {"gelu": torch.relu},
    "no_layernorm": {"layer_norm": lambda x, shape, *args, **kwargs: x},
    "no_attention": {"scaled_dot_product_attention": lambda q, k, v, is_causal: v},
}
REPLACED["bare"] = REPLACED["relu"] | REPLACED["no_layernorm"] | REPLACED["no_attention"]


class CompiledStep(base.EnsembleStep):
    """The trainer's step with every member chunk's ``member_losses`` compiled by inductor (the
    trainer calls each chunk's ``member_losses``, so the compiled one replaces it on the chunk)."""

    def __init__(self, model) -> None:
        super().__init__(model)
        for _, sub in self.opt.member_chunks(base.BATCH * base.N_CTX):
            sub.member_losses = torch.compile(sub.member_losses, dynamic=False)


def stepping(step, replaced: dict):
    """``step`` as a function of a batch, run with ``replaced`` functions of ``torch.nn.functional``."""

    def run(x: torch.Tensor, y: torch.Tensor) -> None:
        with ExitStack() as stack:
            for name, fn in replaced.items():
                stack.enter_context(mock.patch.object(F, name, fn))
            step(x, y)

    return run


def bench_shape(name: str, rounds: int, steps: int, compile_: bool) -> dict:
    E, d, H = base.SHAPES[name]
    make = lambda: base.EnsembleLM(
        base.VOCAB, base.N_CTX, list(range(E)), d_model=d, n_heads=H, init_std=0.09, emb_std=1.0
    )
    sides = {side: stepping(base.EnsembleStep(make()), fns) for side, fns in REPLACED.items()}
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randint(0, base.VOCAB, (2, E, base.BATCH, base.N_CTX), generator=gen)
    out = {"members": E, "d_model": d, "n_heads": H}
    if compile_:
        compiled = CompiledStep(make())
        start = time.perf_counter()
        compiled(x, y)  # compiles the forward and, on the first backward, the backward
        out["compile_wall_s"] = round(time.perf_counter() - start, 1)
        sides["compiled"] = compiled
    for step in sides.values():
        step(x, y)
        step(x, y)
    big = [torch.randn(1024, 1024) for _ in range(2)]
    seconds = {side: [] for side in sides} | {"gemm": []}
    for _ in range(rounds):
        seconds["gemm"].append(base.gemm_seconds(*big, "cpu", 4))
        for side, step in sides.items():
            seconds[side].append(
                base.timed(lambda step=step: [step(x, y) for _ in range(steps)], "cpu") / steps
            )
    med = {k: statistics.median(v) for k, v in seconds.items()}
    peak = 2 * 1024**3 / med["gemm"] / 1e9
    flops = base.flops_per_member_step(d) * E
    out["gemm_peak_gflops"] = round(peak, 1)
    out["sides"] = {
        side: {
            "step_ms": round(med[side] * 1e3, 1),
            "fraction_of_peak": round(flops / med[side] / 1e9 / peak, 3),
            "vs_as_trained": round(med["as_trained"] / med[side], 2),
        }
        for side in sides
    }
    return out


def main() -> None:
    parser = base.shape_parser(__doc__, 3, "paper")
    parser.add_argument("--no-compile", action="store_true", help="leave out the compiled side")
    args = parser.parse_args()
    shapes = base.checked_shapes(parser, args)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")  # inductor's and SDPA's performance hints
    result = {
        "torch": torch.__version__,
        "threads": 1,
        "clock": "process CPU",
        "shapes": {s: bench_shape(s, args.rounds, args.steps, not args.no_compile) for s in shapes},
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return
    for name, r in result["shapes"].items():
        print(f"{name}: GEMM peak {r['gemm_peak_gflops']} GFLOP/s; compile {r.get('compile_wall_s', '-')} s")
        for side, s in r["sides"].items():
            print(
                f"  {side:<14}{s['step_ms']:>8.1f} ms {s['fraction_of_peak']:>6.2f} of peak {s['vs_as_trained']:>6.2f}×"
            )


if __name__ == "__main__":
    main()
