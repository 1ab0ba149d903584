"""Where the time of `reproduce --scale quick` goes: CPU and wall seconds per phase, one process.

    python bench/profile_reproduce.py [--only E1,E2] [--out DIR]

Phases, one after another in this process (one torch thread): each experiment's training (its
sweep into a fresh store), then each experiment's analysis (store → tables, verdicts, figures
drawn) and its figures rendered to PNG, then the whole report written again from the store (what
`entropic-bound report` costs). CPU seconds are this process's clock, so other processes on a
shared machine inflate the walls, not them. Prints one JSON object: phase → [cpu s, wall s].
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="experiments, e.g. E1,E2 (default: all)")
    parser.add_argument("--out", default=None, help="folder for the store and report (default: temporary)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    from entropic_bound import pipeline
    from entropic_bound.config import to_dict
    from entropic_bound.plotting import to_png
    from entropic_bound.registry import EXPERIMENTS
    from entropic_bound.report.writer import analyse_store, write_report
    from entropic_bound.store import RunStore
    from entropic_bound.sweep import run_sweep

    names = args.only.split(",") if args.only else EXPERIMENTS.names()
    profile: dict[str, list[float]] = {}

    def timed(phase: str, fn, *args):
        cpu, wall = time.process_time(), time.perf_counter()
        value = fn(*args)
        profile[phase] = [round(time.process_time() - cpu, 2), round(time.perf_counter() - wall, 2)]
        return value

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        with RunStore(out / "runs.sqlite") as store:
            for name in names:
                exp = pipeline.configure(name, "quick", {})
                store.put_experiment(exp.name, "quick", to_dict(exp.cfg))
                timed(f"{name} train", run_sweep, exp, exp.specs(), store)
            for name in names:
                [(_, _, analysis)] = timed(f"{name} analyse", analyse_store, store, [name])
                figures = list(analysis.figures.values())
                timed(f"{name} figures ({len(figures)} png)", list, map(to_png, figures))
            timed("report from the store (all again)", write_report, store, out / "report")
    for kind in ("train", "analyse", "figures"):
        parts = [v for k, v in profile.items() if f" {kind}" in k]
        profile[f"total {kind}"] = [round(sum(p[0] for p in parts), 2), round(sum(p[1] for p in parts), 2)]
    print(json.dumps(profile, indent=1))


if __name__ == "__main__":
    main()
