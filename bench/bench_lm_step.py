"""One E7 training step (forward, backward, AdamW) of the ensemble LM: the batched-matmul forward
against a broadcast-einsum forward of the same model, in one run, one thread.

    python bench/bench_lm_step.py [--repeats 3] [--steps 40]

Shapes: E7's quick main group (12 members, d_model 32, 2 heads) and its recall control (2 members,
d_model 64). The einsum version is kept here only as the baseline: ``x @ W[:, None]`` broadcasts each
member's weight over the batch, so every step copies the weights once per window and reduces the
copies' gradients back. Prints ms per step for each (min over repeats, the variants interleaved) and
the ratio; the losses of the two agree to float32 round-off (tests/unit/test_lm_model.py checks the
forward against a per-member SDPA reference).
"""

from __future__ import annotations

import argparse
import math
import time

import torch
import torch.nn.functional as F

from entropic_bound.lm import trainer
from entropic_bound.lm.model import Block, EnsembleLM, _ln


def einsum_block_forward(self: Block, x: torch.Tensor, return_pattern: bool = False, patch=None):
    """The previous forward: per-head einsums and broadcast matmuls over the member axis."""
    q = torch.einsum("ebnd,ehdk->ebhnk", x := _ln(x0 := x, self.ln1_w, self.ln1_b), self.W_Q)
    q = q + self.b_Q[:, None, :, None]
    k = torch.einsum("ebnd,ehdk->ebhnk", x, self.W_K) + self.b_K[:, None, :, None]
    v = torch.einsum("ebnd,ehdk->ebhnk", x, self.W_V) + self.b_V[:, None, :, None]
    E, B = x.shape[:2]
    flat = lambda t: t.reshape(E * B, *t.shape[2:])
    z = F.scaled_dot_product_attention(flat(q), flat(k), flat(v), is_causal=True).view(q.shape)
    x = x0 + torch.einsum("ebhnk,ehkd->ebnd", z, self.W_O) + self.b_O[:, None, None]
    h = F.gelu(_ln(x, self.ln2_w, self.ln2_b) @ self.W_in[:, None] + self.b_in[:, None, None])
    return x + h @ self.W_out[:, None] + self.b_out[:, None, None], None


def step_ms(E: int, d_model: int, steps: int, einsum: bool) -> float:
    model = EnsembleLM(256, 32, list(range(E)), d_model=d_model, n_heads=2, init_std=0.09, emb_std=1.0)
    if einsum:
        for block in model.blocks:
            block.forward = einsum_block_forward.__get__(block)
    opt = trainer._optimizer(model, trainer.LMTrainConfig())
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randint(0, 256, (2, E, 32, 32), generator=gen)
    alive = torch.ones(E, dtype=torch.bool)
    for _ in range(3):  # warm-up
        trainer._step(model, opt, x, y, alive, 1.0)
    start = time.perf_counter()
    for _ in range(steps):
        trainer._step(model, opt, x, y, alive, 1.0)
    return (time.perf_counter() - start) / steps * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{'shape':<28}{'einsum ms':>11}{'bmm ms':>9}{'ratio':>8}")
    for E, d in ((12, 32), (2, 64)):
        times = {True: math.inf, False: math.inf}
        for _ in range(args.repeats):
            for einsum in (True, False):
                times[einsum] = min(times[einsum], step_ms(E, d, args.steps, einsum))
        label = f"E={E} d_model={d} B=32 n=32"
        print(f"{label:<28}{times[True]:>11.1f}{times[False]:>9.1f}{times[True] / times[False]:>8.2f}")


if __name__ == "__main__":
    main()
