"""Why MQAR stalls: answer accuracy by query slot, and how often the arg-max is *some* value of
the episode, or a value not yet answered in it (the elimination shortcut: with every key queried
once, guessing among the unanswered values scores (1/4 + 1/3 + 1/2 + 1)/4 = 52 % at 4 pairs).

    PYTHONPATH=src python bench/lm_controls/diagnose.py --steps 3000 --pairs 4 --queries 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from tune import build, emit  # this folder's tuning script (on sys.path when run as a script)

from entropic_bound.language_models.corpora.sources import MQARSource
from entropic_bound.language_models.model.ensemble import EnsembleLM
from entropic_bound.language_models.probes.controls import episode_starts
from entropic_bound.language_models.training.trainer import train_lm_ensemble


@torch.no_grad()
def breakdown(model: EnsembleLM, src: MQARSource, val: np.ndarray, starts: np.ndarray) -> dict:
    """Per query slot of the window's first episode: accuracy, share in episode values, share in
    the not-yet-answered values."""
    n, m, L = model.n_ctx, src.pairs, src.episode_len
    x = torch.as_tensor(np.stack([val[s : s + n + 1] for s in starts]))[None]
    pred = model(x[..., :-1]).argmax(-1)[0].numpy()  # (W, n)
    out = {}
    for j, ph in enumerate(src.answer_phases()):
        if ph > n:
            continue
        ep = x[0].numpy()[:, :L]
        values = ep[:, 2 : 2 * m + 2 : 2]
        answered = ep[:, 2 * m + 2 : ph : 2]
        p, a = pred[:, ph - 1], ep[:, ph]
        in_ep = (p[:, None] == values).any(1)
        unans = in_ep & ~(p[:, None] == answered).any(1) if answered.size else in_ep
        out[f"slot{j}"] = [round(float(v.mean()), 3) for v in (p == a, in_ep, unans)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    for k, v in {
        "d": 64,
        "layers": 2,
        "heads": 2,
        "ctx": 32,
        "steps": 3000,
        "batch": 32,
        "warmup": 100,
    }.items():
        ap.add_argument(f"--{k}", type=int, default=v)
    for k, v in {"pairs": 4, "queries": 4, "keys": 16, "values": 16, "seed": 0}.items():
        ap.add_argument(f"--{k}", type=int, default=v)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--init-std", type=float, default=0.02)
    ap.add_argument("--emb-std", type=float, default=None)
    ap.add_argument("--tokens", type=int, default=2_000_000)
    ap.add_argument("--replace", action="store_true", help="queries drawn with replacement")
    ap.add_argument("--other-weight", type=float, default=1.0, help="loss weight of non-answer targets")
    ap.add_argument("--json", default="")
    ap.add_argument("--save", default="", help="write the trained state dict here")
    args = ap.parse_args()
    torch.set_num_threads(1)
    kw = {"distinct_queries": False} if args.replace else {}
    src = MQARSource(args.pairs, args.queries, args.keys, args.values, **kw)
    tokens = src.sample(args.tokens, np.random.default_rng([args.seed, 7]))
    cut = int(args.tokens * 0.9)
    tr, va = tokens[:cut], tokens[cut:]
    pools = [(episode_starts(tr, src.episode_len, args.ctx), episode_starts(va, src.episode_len, args.ctx))]
    model, cfg = build(args, [args.seed * 100])
    curve = []
    probe_starts = pools[0][1][:256]
    t0 = time.process_time()
    out = train_lm_ensemble(
        model,
        [(tr, va)],
        cfg,
        [torch.Generator().manual_seed(args.seed * 100 + 50)],
        lambda s, mdl: curve.append((s, breakdown(mdl, src, va, probe_starts))),
        pools,
        None if args.other_weight == 1.0 else [np.where(src.answer_mask(cut), 1.0, args.other_weight)],
    )
    cpu = time.process_time() - t0
    if args.save:
        torch.save(model.state_dict(), args.save)
    res = {
        "args": vars(args),
        "cpu_s": round(cpu, 1),
        "val_bits": round(float(out.val_loss[-1][0]) / np.log(2), 3),
        "floor": round(src.aligned_window_bits(args.ctx), 3),
        "curve": curve,
    }
    emit(res, args.json)


if __name__ == "__main__":
    main()
