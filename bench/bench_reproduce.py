"""Wall time of `reproduce` at the quick scale (and, with --paper, the paper scale), one run each.

    python bench/bench_reproduce.py [--only E1,E2] [--paper] [--threads 1]

Each scale runs into a fresh temporary folder (nothing cached), in a subprocess, so the timings
include start-up, training, analysis and the report. Prints wall and CPU seconds and the ratio
paper/quick measured in the same run.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time


def timed_reproduce(scale: str, only: str, threads: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "entropic_bound",
                "reproduce",
                "--scale",
                scale,
                "--only",
                only,
                "--out",
                out,
                "--quiet",
                "--threads",
                str(threads),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="E1,E2")
    parser.add_argument("--paper", action="store_true", help="also time the paper scale (minutes)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    rows = [("quick", *timed_reproduce("quick", args.only, args.threads))]
    if args.paper:
        rows.append(("paper", *timed_reproduce("paper", args.only, args.threads)))
    print(f"reproduce --only {args.only} (threads {args.threads})")
    print(f"{'scale':<8}{'wall s':>10}{'cpu s':>10}")
    for scale, wall, cpu in rows:
        print(f"{scale:<8}{wall:>10.1f}{cpu:>10.1f}")
    if len(rows) == 2:
        print(f"paper / quick wall-time ratio: {rows[1][1] / rows[0][1]:.1f}")


if __name__ == "__main__":
    main()
