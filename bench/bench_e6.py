"""E6's predictions per data draw: the per-cell path against the shared-statistics path, in one run.

    python bench/bench_e6.py [--teachers 1:flat,4:geometric,16:flat] [--seeds 0,3] [--json]

A slice of E6's paper grid (draw 0) runs both ways, one group (one data draw: both teachers, every
σ) at a time, the two paths alternating so that a change in the machine's load shifts both:

- *per cell*: what E6 ran before, a data draw per (teacher, σ) and ``predict_r_star`` per run
  (``experiment.predict_run``);
- *shared*: ``E6Predictability.execute``, the statistics that depend on X and V computed once per
  draw (``predict/shared_draw.py``).

The slice is every run of the named teachers (``r*:spectrum``) at the named seeds: seed 0 holds
every cell of the grid, a seed from 3 on only the decisive cells (the largest N, σ ≤ 0.01), so
together they hold every shape of group the paper grid has. The paper total is extrapolated, and
said to be: each group's CPU seconds are averaged per *shape* (its n, N and member settings, the
same for every r*, spectrum and seed) and multiplied by how many groups of that shape the paper grid
holds. The wall of ``run E6 --scale paper --workers 2`` (two draws) is estimated as the total
CPU of both draws over two workers, analysis not included. One thread (BLAS and torch), process
CPU time. Every run's discrete metrics must agree exactly; the largest relative difference of the
others (below 1e-9 in size compared against 1e-9: the noise level of noiseless data is
round-off itself) is printed.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads BLAS
    os.environ[_var] = "1"

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

from entropic_bound.experiments.e6_predictability.experiment import (  # noqa: E402
    E6Predictability,
    by_data,
    draw,
    predict_run,
    reference_metrics,
)
from entropic_bound.experiments.framework.draws import Seeds  # noqa: E402
from entropic_bound.spectra import panel_description  # noqa: E402

TIMINGS = {"cpu_s", "timing_s"}
COUNTS = {"r_hat", "exact", "identifiable", "confident_wrong", "n_equations", "n_unknowns", "too_few_samples"}
INTEGER = tuple(k for k, v in panel_description(sigma_known=True).items() if v["integer"])
INTEGER += ("noise_calibrated_rank",)
DRAWS, WORKERS = 2, 2  # run E6 --scale paper: two draws, two workers


def shape(group) -> tuple:
    """What a group's cost depends on: n, N and its members' settings (not r*, spectrum or seed)."""
    p = group[0].params
    members = sorted(
        (s.params["teacher"], s.params["method"], s.params["v"], s.params["task.sigma"]) for s in group
    )
    return p["task.n"], p["n_samples"], tuple(members)


def per_cell(exp: E6Predictability, group) -> list:
    """The runs of ``group`` as E6 ran them before: a draw per (teacher, σ), a prediction per run."""
    results = {}
    for specs in by_data(group):
        teacher, X, Y = draw(specs[0].params, specs[0].seed, Seeds(exp.name, specs[0].draw))
        ref = reference_metrics(teacher, X)
        results.update((spec.run_id, predict_run(spec, teacher, X, Y, ref)) for spec in specs)
    return [results[spec.run_id] for spec in group]


def cpu_of(fn, *args) -> tuple[float, list]:
    start = time.process_time()
    result = fn(*args)
    return time.process_time() - start, result


def differences(old: list, new: list) -> tuple[int, float]:
    """``(discrete metrics that differ, largest relative difference of the others)``."""
    wrong, worst = 0, 0.0
    for a, b in zip(old, new):
        for key, x in a.metrics.items():
            y = b.metrics[key]
            if key in TIMINGS or (math.isnan(x) and math.isnan(y)):
                continue
            if key in COUNTS or key.endswith(INTEGER):
                wrong += x != y
            elif x != y:
                worst = max(worst, abs(x - y) / max(abs(x), 1e-9))
    return wrong, worst


def measure(exp: E6Predictability, groups) -> dict:
    """CPU seconds of both paths per group shape, and how far their numbers are apart."""
    cpu = collections.defaultdict(lambda: [0.0, 0.0, 0])  # shape → [per cell, shared, groups]
    paths = [("per_cell", lambda g: per_cell(exp, g)), ("shared", exp.execute)]
    wrong, worst, runs = 0, 0.0, 0
    for i, group in enumerate(groups):
        timed = {name: cpu_of(fn, group) for name, fn in (paths if i % 2 == 0 else paths[::-1])}
        row = cpu[shape(group)]
        row[0], row[1], row[2] = row[0] + timed["per_cell"][0], row[1] + timed["shared"][0], row[2] + 1
        w, d = differences(timed["per_cell"][1], timed["shared"][1])
        wrong, worst, runs = wrong + w, max(worst, d), runs + len(group)
    return {"cpu": cpu, "discrete_differences": wrong, "max_relative_difference": worst, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teachers", default="1:flat,4:geometric,16:flat", help="r*:spectrum list")
    parser.add_argument("--seeds", default="0,3", help="teacher seeds of the slice (default 0,3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    torch.set_num_threads(1)
    exp = E6Predictability(E6Predictability.configure("paper"))
    teachers = {(int(r), s) for r, s in (t.split(":") for t in args.teachers.split(","))}
    seeds = {int(s) for s in args.seeds.split(",")}
    every = exp.groups(exp.specs())
    chosen = [
        g
        for g in every
        if g[0].seed in seeds and (g[0].params["task.r_star"], g[0].params["task.spectrum"]) in teachers
    ]
    result = measure(exp, chosen)
    paper = collections.Counter(shape(g) for g in every)
    missing = [s for s in paper if s not in result["cpu"]]
    old = sum(k * result["cpu"][s][0] / result["cpu"][s][2] for s, k in paper.items() if s in result["cpu"])
    new = sum(k * result["cpu"][s][1] / result["cpu"][s][2] for s, k in paper.items() if s in result["cpu"])
    slice_old = sum(v[0] for v in result["cpu"].values())
    slice_new = sum(v[1] for v in result["cpu"].values())
    summary = {
        "slice": {
            "teachers": sorted(teachers),
            "seeds": sorted(seeds),
            "groups": len(chosen),
            "runs": result["runs"],
        },
        "slice_cpu_s": {"per_cell": slice_old, "shared": slice_new, "ratio": slice_old / slice_new},
        "paper_cpu_s_per_draw_extrapolated": {"per_cell": old, "shared": new, "ratio": old / new},
        "paper_predictions_per_draw": sum(len(g) for g in every),
        "paper_group_shapes_not_in_slice": len(missing),
        "paper_wall_s_estimate": {"per_cell": old * DRAWS / WORKERS, "shared": new * DRAWS / WORKERS},
        "discrete_differences": result["discrete_differences"],
        "max_relative_difference": result["max_relative_difference"],
    }
    if args.json:
        print(json.dumps(summary, indent=1))
        return
    print(
        f"slice: {len(chosen)} groups, {result['runs']} runs (teachers {args.teachers}, seeds {args.seeds})"
    )
    print(f"slice CPU s: per cell {slice_old:.1f}, shared {slice_new:.1f}, ratio {slice_old / slice_new:.2f}")
    print(
        f"paper, extrapolated per group shape ({summary['paper_predictions_per_draw']} runs per draw, "
        f"{len(missing)} shapes not in the slice): per cell {old:.0f} CPU s per draw, shared {new:.0f}, "
        f"ratio {old / new:.2f}"
    )
    print(
        f"run E6 --scale paper --workers {WORKERS} ({DRAWS} draws), predictions only: per cell "
        f"{old * DRAWS / WORKERS:.0f} s wall, shared {new * DRAWS / WORKERS:.0f} s"
    )
    print(
        f"discrete metrics that differ: {result['discrete_differences']}; largest relative difference of "
        f"the others: {result['max_relative_difference']:.2g}"
    )


if __name__ == "__main__":
    main()
