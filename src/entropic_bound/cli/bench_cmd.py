"""``entropic-bound bench train``: ensemble engine vs per-model loop and torch.func vmap (see
:mod:`entropic_bound.bench.train`)."""

from __future__ import annotations

import argparse
import json

from ..errors import UserInputError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("bench", help="measure the speed of the training engine")
    sub = parser.add_subparsers(dest="bench_command", metavar="BENCH", parser_class=type(parser))
    p = sub.add_parser(
        "train", help="ensemble engine vs one Adam per model and vmap over stacked models, same workload"
    )
    p.add_argument(
        "--student",
        required=True,
        type=lambda name: name.replace("-", "_"),  # the registry's linear_qk; linear-qk, as for teachers
        help="linear-qk, softmax or block (linear_qk also accepted)",
    )
    p.add_argument("--models", type=int, default=64, help="models M (default 64)")
    p.add_argument("--n", type=int, default=16, help="tokens per sequence (default 16)")
    p.add_argument("--d", type=int, default=32, help="features d = d_v (default 32)")
    p.add_argument("--batch", type=int, default=32, help="batch size (default 32)")
    p.add_argument("--steps", type=int, default=20, help="training steps per model (default 20)")
    p.add_argument("--rank", type=int, default=0, help="query-key rank per head (default d)")
    p.add_argument("--heads", type=int, default=1, help="heads (default 1)")
    p.add_argument("--v-known", action="store_true", help="fix V to a known matrix (learn only W_Q, W_K)")
    p.add_argument("--repeats", type=int, default=2, help="alternating measurement rounds (default 2)")
    p.add_argument(
        "--max-memory",
        type=int,
        default=64,
        metavar="MB",
        help="chunk the ensemble to this activation budget (default 64; 0: one chunk)",
    )
    p.add_argument(
        "--threads", type=int, default=1, help="torch threads (default 1, as run; 0: torch's choice)"
    )
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=handle_train)
    parser.set_defaults(func=lambda args: parser.print_help() or 0)


def handle_train(args: argparse.Namespace) -> int:
    from ..bench.train import Workload, run_bench

    same_names = (
        "student",
        "models",
        "n",
        "d",
        "batch",
        "steps",
        "rank",
        "heads",
        "v_known",
        "repeats",
        "threads",
    )
    w = Workload(**{name: getattr(args, name) for name in same_names}, max_memory_mb=args.max_memory)
    _check_device(args.device)
    result = run_bench(w, device=args.device)
    if args.json:
        print(json.dumps(result))
        return 0
    _print_table(result)
    return 0


def _check_device(device: str) -> None:
    if device != "cpu" and not device.startswith("cuda"):
        raise UserInputError(f"The 'device' parameter must be 'cpu' or 'cuda[:k]'. Got {device!r} instead.")
    import torch  # here, not at the top: `--help` must not wait for torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserInputError(
            f"The 'device' {device!r} is not available on this machine (no CUDA). Use 'cpu'."
        )


def _print_table(result: dict) -> None:
    wl = result["workload"]
    print(
        f"bench train: {wl['student']} M={wl['models']} n={wl['n']} d={wl['d']} r={wl['rank']} h={wl['heads']} "
        f"batch={wl['batch']} steps={wl['steps']} threads={wl['threads']} device={wl['device']}"
    )
    for side, label in (("ensemble", "ensemble"), ("naive", "per-model"), ("vmap", "vmap")):
        print(
            f"  {label:9} {result[f'{side}_model_steps_per_s']:10.1f} model-steps/s  "
            f"{result[f'{side}_gflops']:7.1f} GFLOP/s  ({result[f'{side}_model_steps_per_cpu_s']:.1f} per CPU s)"
        )
    for key, label in (("ratio", "ratio vs per-model"), ("ratio_vs_vmap", "ratio vs vmap")):
        rounds = result["ratios_per_round" if key == "ratio" else "ratios_vs_vmap_per_round"]
        print(
            f"  {label} {result[key]:.2f}  (rounds: {', '.join(f'{r:.2f}' for r in rounds)}; "
            f"by CPU time {result[f'{key}_cpu']:.2f})"
        )
    print(
        f"  float32 GEMM peak {result['gemm_peak_gflops']:.1f} GFLOP/s; ensemble at "
        f"{100 * result['ensemble_fraction_of_peak']:.0f} %  [{result['flop_formula']}]"
    )
