"""Data-only r* prediction: time and peak memory vs N, and time to r_hat vs training a student.

    python bench/bench_predict.py [--sizes 1000 10000 100000] [--methods linear_v_known ...]
                                  [--train-N 1000] [--skip-train] [--threads T]

Each (method, N) runs in a fresh subprocess so that its peak resident memory (``ru_maxrss``) is its
own; the data themselves (``X`` and ``Y``, float64) are part of that peak and printed beside it.
Targets: N = 10,000, n = d = d_v = 32 under 10 s and 2 GB on 2 CPU cores, time linear in N;
the softmax V-known path at N = 10,000 in ≤ 5 s on a quiet 2-core machine. CPU seconds
(``time.process_time``, all threads) are printed beside wall seconds: on a machine shared with other
jobs the wall time measures the neighbours, the CPU time the work.
Teacher: ``Y = (X K Xᵀ / √d) X V / n + σE`` (linear) or ``softmax(X K Xᵀ / √d) X V + σE``, with
``||K||_F = 2√d`` (SPEC §2), r* = 4, σ = 0.01.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time

import numpy as np

N_TOK, D, D_V, R_STAR, SIGMA = 32, 32, 32, 4, 0.01
TEACHER = {
    "linear_v_known": "linear-qk",
    "linear_v_unknown": "linear-qk",
    "softmax_log_attention": "softmax",
    "softmax_linearised": "softmax",
}


def make_data(N: int, teacher: str, seed: int = 0):
    """``(X, Y, V, K)`` generated in chunks (float64)."""
    rng = np.random.default_rng(seed)
    U, W = (np.linalg.qr(rng.standard_normal((D, R_STAR)))[0] for _ in range(2))
    K = U @ W.T * (2.0 * math.sqrt(D) / math.sqrt(R_STAR))  # ||K||_F = c √d, flat spectrum
    V = np.linalg.qr(rng.standard_normal((D, D_V)))[0]
    X = rng.standard_normal((N, N_TOK, D))
    Y = np.empty((N, N_TOK, D_V))
    for start in range(0, N, 4096):
        Xc = X[start : start + 4096]
        L = Xc @ K @ Xc.transpose(0, 2, 1) / math.sqrt(D)
        if teacher == "softmax":
            M = np.exp(L - L.max(-1, keepdims=True))
            M /= M.sum(-1, keepdims=True)
        else:
            M = L / N_TOK
        Y[start : start + 4096] = M @ Xc @ V + SIGMA * rng.standard_normal((len(Xc), N_TOK, D_V))
    return X, Y, V, K


def child(method: str, N: int) -> None:
    """Run one prediction and print a JSON line (called in a subprocess)."""
    from entropic_bound.predict import predict_r_star

    teacher = TEACHER[method]
    X, Y, V, _ = make_data(N, "softmax" if teacher == "softmax" else "linear")
    data_mb = (X.nbytes + Y.nbytes) / 2**20
    v_arg = None if method in ("linear_v_unknown",) or (method == "softmax_linearised") else V
    start, cpu0 = time.perf_counter(), time.process_time()
    p = predict_r_star(X, Y, teacher=teacher, V=v_arg, method=method)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "method": method,
                "N": N,
                "wall_s": wall,
                "cpu_s": cpu,
                "peak_mb": peak_mb,
                "data_mb": data_mb,
                "r_hat": p.r_hat,
                "identifiable": p.identifiable,
                "teacher_rejected": p.fit.get("teacher_rejected"),
            }
        )
    )


def train_student(N: int, threads: int) -> dict:
    """Plain GD on a B1 student ``(X W_Q)(X W_K)ᵀ X V / (√d n)`` (r = d, V known, init 1e-3) until the
    numerical rank (tol 0.1) of ``K = W_Q W_Kᵀ`` equals r* and the loss is within 10 % of σ²."""
    import torch

    torch.set_num_threads(threads)
    X, Y, V, _ = make_data(N, "linear")
    Xt, Yt, Vt = (torch.tensor(a, dtype=torch.float32) for a in (X, Y, V))
    g = torch.Generator().manual_seed(0)
    W_Q = (1e-3 * torch.randn(D, D, generator=g)).requires_grad_()
    W_K = (1e-3 * torch.randn(D, D, generator=g)).requires_grad_()
    XV = Xt @ Vt  # (N, n, d_v)
    start, lr, steps = time.perf_counter(), 3.0, 0
    while time.perf_counter() - start < 120:
        pred = (Xt @ W_Q) @ (Xt @ W_K).transpose(1, 2) @ XV / (math.sqrt(D) * N_TOK)
        loss = ((pred - Yt) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for w in (W_Q, W_K):
                w -= lr * w.grad
                w.grad = None
        steps += 1
        if steps % 10 == 0:
            s = torch.linalg.svdvals((W_Q @ W_K.T).double())
            rank = int((s > 0.1 * s[0]).sum())
            if rank == R_STAR and loss.item() < 1.1 * SIGMA**2:
                return {
                    "train_s": time.perf_counter() - start,
                    "steps": steps,
                    "rank": rank,
                    "loss": loss.item(),
                }
    return {
        "train_s": float("nan"),
        "steps": steps,
        "rank": rank,
        "loss": loss.item(),
        "note": "did not converge in 120 s",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument(
        "--methods", nargs="+", default=["linear_v_known", "linear_v_unknown", "softmax_log_attention"]
    )
    parser.add_argument("--train-N", type=int, default=1000)
    parser.add_argument("--skip-train", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--child", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], int(args.child[1]))
    print(f"n = d = d_v = {N_TOK}, r* = {R_STAR}, sigma = {SIGMA}")
    print(
        f"{'method':22} {'N':>7} {'wall s':>8} {'cpu s':>8} {'s / 1k':>7} {'peak MB':>8} {'data MB':>8} "
        f"{'r_hat':>5} {'rejected':>8}"
    )
    for method in args.methods:
        for N in args.sizes:
            out = subprocess.run(
                [sys.executable, __file__, "--child", method, str(N)],
                capture_output=True,
                text=True,
                env={**__import__("os").environ, "OMP_NUM_THREADS": str(args.threads)},
            )
            if out.returncode != 0:
                print(f"{method:22} {N:7d} failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{method:22} {N:7d} {r['wall_s']:8.2f} {r['cpu_s']:8.2f} {1000 * r['wall_s'] / N:7.3f} "
                f"{r['peak_mb']:8.0f} {r['data_mb']:8.0f} {r['r_hat']:5d} {str(r['teacher_rejected']):>8}",
                flush=True,
            )
    if not args.skip_train:
        from entropic_bound.predict import predict_r_star

        X, Y, V, _ = make_data(args.train_N, "linear")
        start = time.perf_counter()
        p = predict_r_star(X, Y, teacher="linear-qk", V=V)
        t_pred = time.perf_counter() - start
        t = train_student(args.train_N, args.threads)
        print(
            f"\ntime to r_hat at N = {args.train_N}: predict {t_pred:.2f} s (r_hat = {p.r_hat}) vs GD-trained B1 "
            f"student {t['train_s']:.2f} s ({t['steps']} steps, rank {t['rank']}, loss {t['loss']:.2e}); "
            f"ratio {t['train_s'] / t_pred:.0f}x"
        )


if __name__ == "__main__":
    main()
