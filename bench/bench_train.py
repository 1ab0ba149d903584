"""The issue's four target workloads of the ensemble engine (M=64, n=16, d=32).

    python bench/bench_train.py [--steps S] [--repeats R] [--threads T]

Targets on the 2-core CPU: ratio ≥ 4 at batch 32 and ≥ 1.5 at batch 256, for linear_qk and softmax.
"""

from __future__ import annotations

import argparse

import torch

from entropic_bound.bench_train import Workload, run_bench

TARGETS = [("linear_qk", 32, 4.0), ("linear_qk", 256, 1.5), ("softmax", 32, 4.0), ("softmax", 256, 1.5)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(
        f"{'student':10} {'batch':>5} {'ensemble/s':>11} {'naive/s':>9} {'ratio':>6} {'target':>6} "
        f"{'GFLOP/s':>8} {'peak':>6}"
    )
    for student, batch, target in TARGETS:
        steps = args.steps if batch <= 32 else max(args.steps // 4, 2)
        r = run_bench(
            Workload(student=student, models=64, n=16, d=32, batch=batch, steps=steps, repeats=args.repeats)
        )
        print(
            f"{student:10} {batch:5d} {r['ensemble_model_steps_per_s']:11.0f} {r['naive_model_steps_per_s']:9.0f} "
            f"{r['ratio']:6.2f} {target:6.1f} {r['ensemble_gflops']:8.1f} {r['gemm_peak_gflops']:6.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
