"""Tuning runs for E7's positive controls (issue 20 item 5): one ensemble, one CPU thread.

Members are ``kind:params`` strings — ``mqar:pairs:queries:keys:values``, ``lag:L:V:eps``,
``markov:V:k:alpha``, ``corpus:<registered name>`` — trained with lm/trainer.py's ``train_ensemble``
exactly as E7 trains them (byte vocabulary 256, 90/10 split, random windows). Prints per member the
held-out bits against the exact entropy rate (and the window-limited floor where known), MQAR
answer accuracy on held-out episode-aligned windows, and CPU seconds per member-step.

    PYTHONPATH=src OMP_NUM_THREADS=1 python bench/lm_controls/tune.py --d 64 --layers 2 --ctx 64 \
        --steps 600 --lr 3e-3 mqar:4:4:16:16 lag:8:16:0.1 markov:8:2:0.1
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from entropic_bound.lm.controls import answer_accuracy, episode_starts
from entropic_bound.lm.corpora import VOCAB, load_corpus
from entropic_bound.lm.model import EnsembleLM
from entropic_bound.lm.sources import LagCopySource, MarkovSource, MQARSource
from entropic_bound.lm.trainer import LMTrainConfig, train_ensemble


def make_member(spec: str, n_tokens: int, seed: int, n_ctx: int) -> dict:
    """Tokens, exact rate, window floor and (MQAR) answer mask of one member spec."""
    kind, *a = spec.split(":")
    rng = np.random.default_rng([seed, 7])
    if kind == "mqar":
        src = MQARSource(*map(int, a))
        tokens = src.sample(n_tokens, rng)
        return {"tokens": tokens, "rate": src.entropy_rate(), "mask": src.answer_mask(n_tokens), "src": src}
    if kind == "lag":
        src = LagCopySource(int(a[0]), int(a[1]), float(a[2]))
        return {
            "tokens": src.sample(n_tokens, rng),
            "rate": src.entropy_rate(),
            "floor": src.window_entropy(n_ctx),
        }
    if kind == "markov":
        src = MarkovSource.from_seed(int(a[0]), int(a[1]), float(a[2]), seed)
        return {"tokens": src.sample(n_tokens, rng), "rate": src.entropy_rate()}
    corpus = load_corpus(a[0], n_tokens, seed)
    return {"tokens": corpus.tokens, "rate": corpus.entropy_rate_bits}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("members", nargs="+")
    for k, v in {
        "d": 64,
        "layers": 2,
        "heads": 2,
        "ctx": 64,
        "steps": 600,
        "batch": 32,
        "warmup": 50,
    }.items():
        ap.add_argument(f"--{k}", type=int, default=v)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--tokens", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    torch.set_num_threads(1)
    members = [make_member(m, args.tokens, args.seed, args.ctx) for m in args.members]
    cut = int(args.tokens * 0.9)
    splits = [(m["tokens"][:cut], m["tokens"][cut:]) for m in members]
    model = EnsembleLM(
        VOCAB,
        args.ctx,
        [args.seed * 100 + e for e in range(len(members))],
        d_model=args.d,
        n_layers=args.layers,
        n_heads=args.heads,
    )
    cfg = LMTrainConfig(
        steps=args.steps, batch_size=args.batch, lr=args.lr, warmup=args.warmup, checkpoints=8
    )
    gens = [torch.Generator().manual_seed(args.seed * 100 + 50 + e) for e in range(len(members))]
    t0 = time.process_time()
    out = train_ensemble(model, splits, cfg, gens)
    cpu = time.process_time() - t0
    rows = []
    for e, (spec, m) in enumerate(zip(args.members, members)):
        bits = [float(v[e]) / np.log(2) for v in out.val_loss]
        row = {
            "member": spec,
            "val_bits": round(bits[-1], 3),
            "rate": round(m["rate"], 3) if m["rate"] else None,
            "curve": [round(b, 2) for b in bits],
        }
        if "floor" in m:
            row["window_floor"] = round(m["floor"], 3)
        rows.append(row)
    if any("mask" in m for m in members):  # accuracy needs every member's windows: evaluate per MQAR member
        for e, m in enumerate(members):
            if "mask" not in m:
                continue
            val, mask = m["tokens"][cut:], m["mask"][cut:]
            starts = episode_starts(val, m["src"].episode_len, args.ctx)[:128]
            all_splits = [val if i == e else members[i]["tokens"][cut:] for i in range(len(members))]
            all_masks = [mask if i == e else np.zeros(len(all_splits[i]), bool) for i in range(len(members))]
            acc = answer_accuracy(model, all_splits, all_masks, [starts] * len(members))
            rows[e]["answer_acc"] = round(float(acc[e]), 3)
    summary = {
        "args": vars(args),
        "cpu_s": round(cpu, 1),
        "cpu_per_member_step_ms": round(1000 * cpu / args.steps / len(members), 2),
        "rows": rows,
    }
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "a") as fh:
            fh.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
