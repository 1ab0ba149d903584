"""Tuning runs for E7's positive controls: one ensemble, one CPU thread.

Members are ``kind:params`` strings — ``mqar:pairs:queries:keys:values[:r]`` (``r``: queries with replacement), ``lag:L:V:eps``,
``markov:V:k:alpha``, ``corpus:<registered name>`` — trained with lm/trainer.py's ``train_lm_ensemble``
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

from entropic_bound.language_models.corpora.catalogue import VOCAB, load_corpus
from entropic_bound.language_models.corpora.complexity import kgram_heldout_bits
from entropic_bound.language_models.corpora.sources import LagCopySource, MarkovSource, MQARSource
from entropic_bound.language_models.model.ensemble import EnsembleLM
from entropic_bound.language_models.probes.controls import answer_accuracy, episode_starts
from entropic_bound.language_models.training.trainer import (
    LMTrainConfig,
    heldout_bits,
    tiling_starts,
    train_lm_ensemble,
)


def make_member(spec: str, n_tokens: int, seed: int, n_ctx: int) -> dict:
    """Tokens, exact rate, window floor and (MQAR) answer mask of one member spec."""
    kind, *a = spec.split(":")
    rng = np.random.default_rng([seed, 7])
    if kind == "mqar":
        src = MQARSource(*map(int, a[:4]), distinct_queries=a[4:] != ["r"])  # mqar:m:Q:K:V[:r]
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
    cut = int(len(corpus.tokens) * 0.9)  # a shipped text may be shorter than n_tokens
    kgram = min(kgram_heldout_bits(corpus.tokens[:cut], corpus.tokens[cut:], VOCAB, 5).values())
    return {"tokens": corpus.tokens, "rate": corpus.entropy_rate_bits, "kgram_ref": kgram}


def make_accuracy_probe(members: list[dict], cut: int, n_ctx: int, curve: list):
    """A checkpoint callback appending every member's MQAR answer accuracy (NaN for other members)."""
    if not any("mask" in m for m in members):
        return None
    vals = [m["tokens"][cut:] for m in members]
    masks = [m["mask"][cut:] if "mask" in m else np.zeros(len(v), bool) for m, v in zip(members, vals)]
    starts = []
    for m, v in zip(members, vals):
        s = episode_starts(v, m["src"].episode_len, n_ctx) if "mask" in m else np.arange(0, 64 * 8, 8)
        starts.append(s[:64])

    # windows open at even-numbered episodes: answers of even episodes are the window's first
    # episode (A), of odd ones its second (B), so the two accuracies tell whether B is the failure
    even = []
    for m, v, mk, s in zip(members, vals, masks, starts):
        ep = (np.arange(len(v)) - (s[0] if len(s) else 0)) // m["src"].episode_len if "mask" in m else 0
        even.append(mk & (np.asarray(ep) % 2 == 0))
    starts_a = [s[::2] for s in starts]

    def probe(step: int, model) -> None:
        acc = answer_accuracy(model, vals, masks, starts)
        acc_a = answer_accuracy(model, vals, even, starts_a)
        acc_b = answer_accuracy(model, vals, [mk & ~ev for mk, ev in zip(masks, even)], starts_a)
        curve.append(
            [
                (round(float(a), 3), round(float(x), 3), round(float(y), 3)) if "mask" in m else None
                for a, x, y, m in zip(acc, acc_a, acc_b, members)
            ]
        )

    return probe


def emit(record: dict, jsonl: str | None) -> None:
    """Print ``record`` as one JSON line and append it to ``jsonl`` (the runs' log) when given."""
    print(json.dumps(record))
    if jsonl:
        with open(jsonl, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def build(args: argparse.Namespace, seeds: list[int]) -> tuple[EnsembleLM, LMTrainConfig]:
    """The ensemble (one member per seed) and training config the command line asks for; also
    diagnose.py's."""
    model = EnsembleLM(
        VOCAB,
        args.ctx,
        seeds,
        d_model=args.d,
        n_layers=args.layers,
        n_heads=args.heads,
        init_std=args.init_std,
        emb_std=args.emb_std,
    )
    cfg = LMTrainConfig(
        steps=args.steps, batch_size=args.batch, lr=args.lr, warmup=args.warmup, checkpoints=8
    )
    return model, cfg


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
    ap.add_argument("--init-std", type=float, default=0.02)
    ap.add_argument("--emb-std", type=float, default=None)
    ap.add_argument("--tokens", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default="")
    ap.add_argument("--align", action="store_true", help="MQAR windows start at episode starts")
    args = ap.parse_args()
    torch.set_num_threads(1)
    members = [make_member(m, args.tokens, args.seed, args.ctx) for m in args.members]
    cut = int(args.tokens * 0.9)
    splits = [
        (m["tokens"][: int(len(m["tokens"]) * 0.9)], m["tokens"][int(len(m["tokens"]) * 0.9) :])
        for m in members
    ]
    model, cfg = build(args, [args.seed * 100 + e for e in range(len(members))])
    gens = [torch.Generator().manual_seed(args.seed * 100 + 50 + e) for e in range(len(members))]
    acc_curve: list[list[float]] = []
    on_ckpt = make_accuracy_probe(members, cut, args.ctx, acc_curve)
    t0 = time.process_time()
    pools = [
        (
            episode_starts(tr, m["src"].episode_len, args.ctx),
            episode_starts(va, m["src"].episode_len, args.ctx),
        )
        if args.align and "mask" in m
        else None
        for m, (tr, va) in zip(members, splits)
    ]
    out = train_lm_ensemble(model, splits, cfg, gens, on_ckpt, pools)
    cpu = time.process_time() - t0
    vals = [va for _, va in splits]
    tiles = [tiling_starts(len(v), args.ctx, None if p is None else p[1], 1024) for v, p in zip(vals, pools)]
    final = heldout_bits(model, vals, tiles)  # E7's final held-out loss (up to 1,024 windows)
    rows = []
    for e, (spec, m) in enumerate(zip(args.members, members)):
        bits = [float(v[e]) / np.log(2) for v in out.val_loss]
        row = {
            "member": spec,
            "val_bits": round(bits[-1], 3),
            "heldout_bits": round(float(final[e]), 3),
            "rate": round(m["rate"], 3) if m["rate"] else None,
        }
        row["curve"] = [round(b, 2) for b in bits]
        if "kgram_ref" in m:
            row["kgram_ref"] = round(m["kgram_ref"], 3)
        if "floor" in m:
            row["window_floor"] = round(m["floor"], 3)
        if "mask" in m:
            row["answer_acc"], row["acc_first_episode"], row["acc_second_episode"] = acc_curve[-1][e]
            row["acc_curve"] = [a[e][0] for a in acc_curve]
        rows.append(row)
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
