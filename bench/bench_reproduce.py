"""Wall and CPU time of `reproduce --scale quick` with 1 and with 2 worker processes, in one run.

    python bench/bench_reproduce.py [--only E1,E2] [--workers 1,2] [--paper]

Each measurement runs into a fresh temporary folder (nothing cached), in a subprocess, so the
timings include start-up, training, analysis and the report; the CPU seconds count the workers
too. Prints each row, the wall-time ratio of the first to every other worker count (measured in
the same run, so a machine's load shifts both), and whether every verdict came out the same.
On a shared machine the walls are inflated by the other processes; the CPU seconds much less.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed_reproduce(scale: str, only: str | None, workers: int) -> tuple[float, float, dict]:
    """``(wall s, CPU s of the command and its workers, claim → verdict)``."""
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "entropic_bound", "reproduce", "--scale", scale, "--out", out]
        command += ["--quiet", "--workers", str(workers)] + (["--only", only] if only else [])
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        verdicts = json.loads((Path(out) / "verdicts.json").read_text())
        return wall, cpu, {claim: v["verdict"] for claim, v in verdicts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="experiments, e.g. E1,E2 (default: all)")
    parser.add_argument("--workers", default="1,2", help="worker counts to compare (default 1,2)")
    parser.add_argument("--paper", action="store_true", help="the paper scale instead (hours)")
    args = parser.parse_args()
    scale = "paper" if args.paper else "quick"
    counts = [int(w) for w in args.workers.split(",")]
    rows = [(w, *timed_reproduce(scale, args.only, w)) for w in counts]
    print(f"reproduce --scale {scale} --only {args.only or 'all'}")
    print(f"{'workers':<9}{'wall s':>10}{'cpu s':>10}{'cpu/wall':>10}")
    for w, wall, cpu, _ in rows:
        print(f"{w:<9}{wall:>10.1f}{cpu:>10.1f}{cpu / wall:>10.2f}")
    for w, wall, _, _ in rows[1:]:
        print(f"wall-time ratio {rows[0][0]} / {w} workers: {rows[0][1] / wall:.2f}")
    same = all(r[3] == rows[0][3] for r in rows[1:])
    print(f"every verdict the same across worker counts: {same}")


if __name__ == "__main__":
    main()
