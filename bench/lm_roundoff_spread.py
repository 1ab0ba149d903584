"""How far float32 round-off alone moves E7's held-out losses: the yardstick for "the same numbers".

    python bench/lm_roundoff_spread.py [--json] [--members 8] [--steps 600]
                                       [--variants today,init_ulp_a,...] [--against FILE]

Trains quick E7's first ``--members`` main-shape language models (their run ids' seeds, corpora,
batches and schedule, ``execute_lm_group`` without the probes, which read the model and change
nothing) once with today's step and once per variant that changes nothing but float32 round-off:

- ``rerun``: today's step again (must agree bit for bit: the check that the rest is round-off);
- ``init_ulp_a`` / ``init_ulp_b`` (``_c``, ``_d`` when named): every initial weight moved by one
  ulp, up or down by a coin flip per element (one coin seed each);
- ``clip_reversed``: the per-member gradient norm of the clipping summed in the reverse order;
- ``threads_2``: two intra-op threads instead of one (the BLAS could split its sums differently;
  not run unless named);
- ``microbatch_2``: each step's gradient accumulated over two halves of the batch (the mean loss
  is the mean of the halves' means, exact in real arithmetic).

Each is then scored as quick scores it: bits/token over up to 1,024 non-overlapping windows of
the member's held-out split (``execute._heldout``). Prints, per variant, every member's held-out
bits and its largest and median |difference| from today's; ``spread`` summarises all variants
but ``rerun``, over all members and per member (the largest |difference| any variant made). Training is chaotic at these sizes, so the spread says which tolerance a faster
step's held-out losses can be held to short of bit-for-bit identity. ``--against FILE`` (an
earlier ``--json`` output, e.g. of the step before a change) adds how far this run's ``today``
lies from that file's, beside that file's spread.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time

import numpy as np
import torch

from entropic_bound import pipeline
from entropic_bound.experiments.e7_language import execute
from entropic_bound.experiments.framework.draws import derive_seed
from entropic_bound.experiments.framework.params import from_params
from entropic_bound.language_models.model.ensemble import EnsembleLM
from entropic_bound.language_models.training import flat, trainer
from entropic_bound.language_models.training.trainer import LMTrainConfig

COINS = {"init_ulp_a": 1, "init_ulp_b": 2, "init_ulp_c": 3, "init_ulp_d": 4}
VARIANTS = ("today", "rerun", *COINS, "clip_reversed", "threads_2", "microbatch_2")
#: ``threads_2`` is left out by default: measured bit for bit today's at these shapes (the BLAS runs
#: such small products on one thread), for ten times the CPU time (the second thread spins);
#: ``init_ulp_c``/``_d`` are two more coin seeds, for a closer look at one member.
DEFAULT_VARIANTS = tuple(v for v in VARIANTS if v not in ("threads_2", "init_ulp_c", "init_ulp_d"))


def quick_main_group(count: int):
    """The first ``count`` specs of quick E7's main-shape ensemble and their (corpus, train, held-out)."""
    exp = pipeline.configure("E7", "quick", {})
    shape = exp.cfg.model.d_model
    specs = [s for s in exp.specs() if s.params.get("model.d_model") == shape][:count]
    members, loaded = [], {}
    for spec in specs:
        name = spec.params["corpus.name"]
        if name not in loaded:
            corpus = execute._load(spec)
            cut = int(len(corpus.tokens) * (1 - spec.params["val_fraction"]))
            loaded[name] = (corpus, corpus.tokens[:cut], corpus.tokens[cut:], None)
        members.append(loaded[name])
    return specs, members


def perturb_init(model: EnsembleLM, coin_seed: int) -> None:
    """Every parameter element one ulp up or down (a coin flip each)."""
    gen = torch.Generator().manual_seed(coin_seed)
    with torch.no_grad():
        for p in model.parameters():
            up = torch.rand(p.shape, generator=gen) < 0.5
            target = torch.where(up, torch.full_like(p, float("inf")), torch.full_like(p, float("-inf")))
            p.copy_(torch.nextafter(p, target))


class ReversedClip(flat.FlatAdamW):
    """Today's optimizer with the clipping norm summed parameter by parameter in reverse order."""

    def clip_per_member(self, max_norm: float) -> None:
        sq = sum(g.pow(2).flatten(1).sum(dim=1) for g in reversed(self.norm_terms))
        scale = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
        for buffer in self.buffers:
            buffer.data.grad.mul_(scale[:, None])


def microbatch_step(opt, x, y, alive, clip, w=None):
    """Today's step with the gradient accumulated over two halves of the batch."""
    opt.zero_grad()
    half, losses = x.shape[1] // 2, []
    for part in (slice(0, half), slice(half, None)):
        chunk = opt.model.member_losses(x[:, part], y[:, part])
        live = alive.to(chunk.device) & torch.isfinite(chunk).detach()
        opt.backward(torch.where(live, chunk, torch.zeros_like(chunk)).sum() / 2)
        losses.append(chunk.detach())
    opt.clip_per_member(clip)
    opt.step()
    return (sum(losses) / 2).double().cpu()


@contextlib.contextmanager
def variant_patches(variant: str):
    """The trainer as ``variant`` runs it (restored afterwards)."""
    saved = trainer._optimizer, trainer._step, torch.get_num_threads()
    if variant == "clip_reversed":
        trainer._optimizer = lambda model, cfg: ReversedClip(
            model, lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.99)
        )
    elif variant == "microbatch_2":
        trainer._step = microbatch_step
    elif variant == "threads_2":
        torch.set_num_threads(2)
    try:
        yield
    finally:
        trainer._optimizer, trainer._step = saved[:2]
        torch.set_num_threads(saved[2])


def train_and_score(variant: str, specs, members, steps: int | None) -> tuple[list[float], float]:
    """Held-out bits/token of every member after training under ``variant``, and the CPU seconds."""
    model = execute.group_model(specs)
    if variant.startswith("init_ulp_"):
        perturb_init(model, COINS[variant])
    cfg = LMTrainConfig(**from_params(specs[0], "train"))
    cfg = cfg if steps is None else LMTrainConfig(**{**cfg.__dict__, "steps": steps})
    gens = [torch.Generator().manual_seed(derive_seed("E7/data", s.run_id)) for s in specs]
    pools = execute._episode_pools(specs, members, model.n_ctx)
    start = time.process_time()
    with variant_patches(variant):
        trainer.train_lm_ensemble(model, [(m[1], m[2]) for m in members], cfg, gens, None, pools)
        bits = [r["heldout_bits"] for r in execute._heldout(model, members, pools)]
    return bits, time.process_time() - start


def summary(today: list[float], other: list[float]) -> dict:
    diffs = np.abs(np.asarray(other) - np.asarray(today))
    return {"max_abs_diff": float(diffs.max()), "median_abs_diff": float(np.median(diffs))}


def per_run_spread(today: list[float], perturbed: list[dict]) -> list[float] | None:
    """Per member, the largest |held-out difference| from today's that any perturbed variant made."""
    if not perturbed:
        return None
    diffs = np.abs(np.asarray([r["heldout_bits"] for r in perturbed]) - np.asarray(today))
    return diffs.max(axis=0).tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--members", type=int, default=8, help="quick's first main-shape runs (1-22)")
    parser.add_argument("--steps", type=int, default=None, help="training steps (default: quick's 600)")
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS), help=f"of {', '.join(VARIANTS)}")
    parser.add_argument("--against", default=None, help="an earlier --json output to compare today's with")
    args = parser.parse_args()
    variants = ["today"] + [v for v in args.variants.split(",") if v != "today"]
    if any(v not in VARIANTS for v in variants) or not 1 <= args.members <= 22 or (args.steps or 1) < 1:
        parser.exit(2, f"--variants must name some of {', '.join(VARIANTS)}; --members 1-22; --steps >= 1\n")
    torch.set_num_threads(1)
    specs, members = quick_main_group(args.members)
    runs = {}
    for variant in variants:
        bits, cpu = train_and_score(variant, specs, members, args.steps)
        runs[variant] = {"heldout_bits": bits, "cpu_s": round(cpu, 1)}
        if variant != "today":
            runs[variant] |= summary(runs["today"]["heldout_bits"], bits)
    perturbed = [r for v, r in runs.items() if v not in ("today", "rerun")]
    result = {
        "runs": [f"{s.params['corpus.name']}/seed {s.seed}" for s in specs],
        "run_ids": [s.run_id for s in specs],
        "steps": args.steps or specs[0].params["train.steps"],
        "variants": runs,
        "spread": {
            "max_abs_diff_bits": max((r["max_abs_diff"] for r in perturbed), default=None),
            "median_abs_diff_bits": statistics.median([r["median_abs_diff"] for r in perturbed])
            if perturbed
            else None,
            "per_run_max_abs_diff_bits": per_run_spread(runs["today"]["heldout_bits"], perturbed),
        },
    }
    if args.against:
        earlier = json.loads(open(args.against).read())
        if earlier["run_ids"] != result["run_ids"] or earlier["steps"] != result["steps"]:
            parser.exit(2, f"--against {args.against}: other runs or steps than this run's\n")
        before = earlier["variants"]["today"]["heldout_bits"]
        result["against"] = {
            **summary(before, runs["today"]["heldout_bits"]),
            "per_run_abs_diff_bits": np.abs(np.subtract(runs["today"]["heldout_bits"], before)).tolist(),
            "its_spread": earlier["spread"],
        }
    if args.json:
        print(json.dumps(result, indent=1))
        return
    for variant, r in runs.items():
        diff = (
            ""
            if variant == "today"
            else f"  max |Δ| {r['max_abs_diff']:.5f}  median {r['median_abs_diff']:.5f}"
        )
        print(f"{variant:<14}{r['cpu_s']:>7.1f} CPU s{diff}")
    print(f"spread over the perturbed variants: {result['spread']}")
    if "against" in result:
        print(f"today against {args.against}: {result['against']}")


if __name__ == "__main__":
    main()
