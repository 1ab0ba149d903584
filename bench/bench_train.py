"""The target workloads of the ensemble engine (M=64, n=16, d=32, full rank, one thread by default).

    python bench/bench_train.py [--steps S] [--repeats R] [--threads T] [--only linear_qk]

Each row measures the three sides alternately, ``repeats`` rounds (see
:mod:`entropic_bound.bench.train`). Targets on the 2-core CPU: against the per-model loop, ratio
≥ 4 at batch 32 and ≥ 1.5 at batch 256 (linear_qk and softmax); against the torch.func vmap recipe,
≥ 1.5 at batch 32 and ≥ 2.5 at batch 256 (linear_qk).
"""

from __future__ import annotations

import argparse
import json

from entropic_bound.bench.train import Workload, run_bench

# (student, batch, target vs per-model, target vs vmap or None)
TARGETS = [
    ("linear_qk", 32, 4.0, 1.5),
    ("linear_qk", 256, 1.5, 2.5),
    ("softmax", 32, 4.0, None),
    ("softmax", 256, 1.5, None),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1; 0: torch's choice)")
    parser.add_argument("--only", default=None, help="one student (linear_qk or softmax)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    args = parser.parse_args()
    print(
        f"{'student':10} {'batch':>5} {'ensemble/s':>11} {'naive/s':>9} {'vmap/s':>9} {'ratio':>6} "
        f"{'target':>6} {'vs vmap':>7} {'target':>6} {'GFLOP/s':>8} {'peak':>6}"
    )
    for student, batch, target, target_vmap in TARGETS:
        if args.only and student != args.only:
            continue
        steps = args.steps if batch <= 32 else max(args.steps // 4, 2)
        w = Workload(
            student=student,
            models=64,
            n=16,
            d=32,
            batch=batch,
            steps=steps,
            repeats=args.repeats,
            threads=args.threads,
        )
        r = run_bench(w, device=args.device)
        if args.json:
            print(json.dumps(r), flush=True)
            continue
        tv = "-" if target_vmap is None else f"{target_vmap:.1f}"
        print(
            f"{student:10} {batch:5d} {r['ensemble_model_steps_per_s']:11.0f} {r['naive_model_steps_per_s']:9.0f} "
            f"{r['vmap_model_steps_per_s']:9.0f} {r['ratio']:6.2f} {target:6.1f} {r['ratio_vs_vmap']:7.2f} "
            f"{tv:>6} {r['ensemble_gflops']:8.1f} {r['gemm_peak_gflops']:6.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
